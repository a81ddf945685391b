package feed

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/activity"
)

// TestWake: {"op":"wake"} over the socket and POST /v1/wake over HTTP
// call Config.Wake and reply ok with the version, or its error; without
// Config.Wake it is an error saying the server does not sleep; a wake
// takes no fields and is never feed activity.
func TestWake(t *testing.T) {
	var woken atomic.Int32
	var refuse atomic.Bool
	s, _, store, base := startHTTP(t, Config{StaleAfter: time.Minute, Wake: func() error {
		if refuse.Load() {
			return errors.New("refused: 6 wakes began in the last hour")
		}
		woken.Add(1)
		return nil
	}}, HTTPConfig{})
	c := dialRaw(t, s.Path())
	if r := c.roundTrip(t, `{"op":"wake"}`); !r.OK || r.Version != store.Snapshot().Version || woken.Load() != 1 {
		t.Fatalf("wake: %+v (woken %d)", r, woken.Load())
	}
	if a := do(t, "POST", base+"/v1/wake", testToken, "", ""); a.code != 200 || !a.rep.OK || woken.Load() != 2 {
		t.Fatalf("POST /v1/wake: %+v", a)
	}
	if a := do(t, "GET", base+"/v1/wake", testToken, "", ""); a.code != 405 || a.hdr.Get("Allow") != "POST" {
		t.Fatalf("GET /v1/wake: %+v", a)
	}
	if r := c.roundTrip(t, `{"op":"wake","port":1}`); r.OK || r.Error != `"port": unknown field for op "wake"` {
		t.Fatalf("wake with a field: %+v", r)
	}
	refuse.Store(true)
	if r := c.roundTrip(t, `{"op":"wake"}`); r.OK || r.Error != "wake: refused: 6 wakes began in the last hour" {
		t.Fatalf("refused wake: %+v", r)
	}
	if a := do(t, "POST", base+"/v1/wake", testToken, "", ""); a.code != 400 || a.rep.Error != "wake: refused: 6 wakes began in the last hour" {
		t.Fatalf("refused POST /v1/wake: %+v", a)
	}
	if !s.LastFed().IsZero() {
		t.Fatal("a wake is not feed activity")
	}

	off, _ := start(t, Config{})
	if r := dialRaw(t, off.Path()).roundTrip(t, `{"op":"wake"}`); r.OK || r.Error != "wake: this server does not sleep (set [sleep] after, start and stop)" {
		t.Fatalf("wake without sleep: %+v", r)
	}
}

// TestStaleRests: while the server rests the feed is never stale, and
// once awake its quiet counts from the wake.
func TestStaleRests(t *testing.T) {
	rest := &activity.Rest{}
	s, _ := start(t, Config{StaleAfter: time.Second, Rest: rest})
	c := dialRaw(t, s.Path())
	c.roundTrip(t, `{"op":"ping"}`)
	now := time.Now()
	if !s.Stale(now.Add(2 * time.Second)) {
		t.Fatal("not stale 2 s after its last ping")
	}
	rest.Down(now)
	if s.Stale(now.Add(time.Hour)) {
		t.Fatal("stale while the server rests")
	}
	woke := now.Add(time.Hour)
	rest.Woke(woke)
	if s.Stale(woke.Add(time.Second)) || !s.Stale(woke.Add(1100*time.Millisecond)) {
		t.Fatal("once awake, the quiet counts from the wake")
	}
}

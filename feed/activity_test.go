package feed

import (
	"testing"
	"time"
)

// TestActivity is the rule of what keeps the feed live, over the socket:
// an accepted replace or patch, or a ping; never a rejected state, get,
// peer, a malformed line or a connection that sends nothing. Only an
// accepted state makes the feed fed.
func TestActivity(t *testing.T) {
	for _, tc := range []struct {
		line       string
		active, ok bool
		fed        bool
	}{
		{line: `{"op":"get"}`},
		{line: `{"op":"peer","port":5}`}, // rejected: relay mode is off
		{line: `{"op":"replace","state":{"max_players":-1}}`},
		{line: `{"op":"patch","state":{"players":{"1":{"score":1.5}}}}`},
		{line: `{"op":"nope"}`},
		{line: `not json`},
		{line: `{"op":"ping"}`, active: true},
		{line: `{"op":"patch","state":{"map":"m"}}`, active: true, fed: true},
		{line: `{"op":"replace","state":{"map":"m"}}`, active: true, fed: true},
	} {
		t.Run(tc.line, func(t *testing.T) {
			s, _ := start(t, Config{StaleAfter: time.Minute})
			idle := dialRaw(t, s.Path()) // connected, never writes
			_ = idle
			c := dialRaw(t, s.Path())
			c.roundTrip(t, tc.line)
			if got := !s.LastFed().IsZero(); got != tc.active {
				t.Fatalf("activity %v, want %v", got, tc.active)
			}
			if got := !s.Fed().IsZero(); got != tc.fed {
				t.Fatalf("fed %v, want %v", got, tc.fed)
			}
			if !tc.active && s.Stale(time.Now().Add(time.Hour)) {
				t.Fatal("stale without activity")
			}
			if tc.active && !s.Stale(time.Now().Add(time.Hour)) {
				t.Fatal("not stale an hour after its activity")
			}
		})
	}
}

// TestActivityAfterFed: a rejected state after the feed was live does not
// keep it live.
func TestActivityAfterFed(t *testing.T) {
	s, _ := start(t, Config{StaleAfter: time.Minute})
	c := dialRaw(t, s.Path())
	if r := c.roundTrip(t, `{"op":"replace","state":{"map":"m"}}`); !r.OK {
		t.Fatal(r.Error)
	}
	fed, last := s.Fed(), s.LastFed()
	time.Sleep(2 * time.Millisecond)
	for _, line := range []string{`{"op":"get"}`, `{"op":"replace","state":{"max_players":-1}}`, `{"op":"peer","port":5}`} {
		c.roundTrip(t, line)
	}
	if !s.LastFed().Equal(last) || !s.Fed().Equal(fed) {
		t.Fatalf("get, peer or a rejected state moved the feed's activity: %v → %v", last, s.LastFed())
	}
	c.roundTrip(t, `{"op":"ping"}`)
	if !s.LastFed().After(last) || !s.Fed().Equal(fed) {
		t.Fatal("a ping is activity and does not change when the feed was first fed")
	}
}

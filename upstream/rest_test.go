package upstream

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/internal/activity"
)

// TestPollerRests: while the game server is down on purpose ([sleep]) the
// poller asks nothing and is not stale; waking, it asks again, at once
// when kicked; awake, its quiet counts from the wake.
func TestPollerRests(t *testing.T) {
	up := newScripted("answer")
	rest := &activity.Rest{}
	p, err := New(Config{
		Protocol: up, Address: upAddr, Interval: time.Hour, Timeout: 100 * time.Millisecond, StaleAfter: time.Second,
		Rest: rest, Registry: prometheus.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Publish: func(map[string]any) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Serve(ctx)
	waitFor(t, "the first poll", func() bool { return up.polls.Load() == 1 })
	rest.Down(time.Now())
	up.set("silent", "")
	p.Kick()
	time.Sleep(200 * time.Millisecond)
	if n := up.polls.Load(); n != 1 {
		t.Fatalf("%d polls while the game server is down on purpose", n)
	}
	if p.Stale(time.Now().Add(time.Hour)) {
		t.Fatal("stale while the server rests")
	}
	rest.Waking()
	p.Kick()
	waitFor(t, "a poll when kicked while waking", func() bool { return up.polls.Load() == 2 })
	if p.Stale(time.Now().Add(time.Hour)) {
		t.Fatal("stale while the server wakes")
	}
	up.set("answer", "scripted")
	p.Kick()
	waitFor(t, "an answer", func() bool { return up.polls.Load() == 3 && !p.LastAnswer().IsZero() })
	woke := time.Now()
	rest.Woke(woke)
	if p.Stale(woke.Add(900*time.Millisecond)) || !p.Stale(woke.Add(1100*time.Millisecond)) {
		t.Fatal("awake: stale after stale_after from the wake (later than the answer)")
	}
}

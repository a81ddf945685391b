package upstream

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/internal/udptest"
	"github.com/queryd/queryd/state"
)

// fakeQ3 is a scripted Quake 3 game server on loopback: it answers
// getstatus as mode says (answer, silent, garbage) and counts datagrams.
type fakeQ3 struct {
	addr     string
	mode     atomic.Value // string
	received atomic.Int64
	hostname atomic.Value // string
}

func newFakeQ3(t testing.TB) *fakeQ3 {
	f := &fakeQ3{}
	f.mode.Store("answer")
	f.hostname.Store("fake q3")
	f.addr = udptest.Serve(t, func(req []byte, send func([]byte) bool) {
		f.received.Add(1)
		const cmd = "\xFF\xFF\xFF\xFFgetstatus "
		if !bytes.HasPrefix(req, []byte(cmd)) {
			return
		}
		ch := string(req[len(cmd):])
		switch f.mode.Load().(string) {
		case "answer":
			send([]byte("\xFF\xFF\xFF\xFFstatusResponse\n\\challenge\\" + ch + `\sv_hostname\` + f.hostname.Load().(string) +
				`\mapname\q3dm17\sv_maxclients\16\g_gametype\0` + "\n" + `5 40 "Ann"` + "\n" + `0 0 "Bot"` + "\n"))
		case "garbage":
			send([]byte("\xFF\xFF\xFF\xFFstatusResponse\nno backslash\n"))
		}
	})
	return f
}

// counter returns the value of a counter series of reg.
func counter(t testing.TB, reg *prometheus.Registry, name, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() != name {
				continue
			}
			if outcome == "" {
				if g := m.GetGauge(); g != nil {
					return g.GetValue()
				}
				return float64(m.GetHistogram().GetSampleCount())
			}
			for _, l := range m.GetLabel() {
				if l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// waitFor waits up to 5 s for cond.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5 s: %s", what)
		}
	}
}

// startPoller runs a poller of addr into a store until the test ends.
func startPoller(t *testing.T, protocol, addr string, staleAfter time.Duration, logs io.Writer) (*Poller, *state.Store, *prometheus.Registry) {
	t.Helper()
	store, err := state.NewStore(map[string]any{"name": "config"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	p, err := New(Config{
		Protocol: protocol, Address: addr, Interval: 50 * time.Millisecond, Timeout: 100 * time.Millisecond,
		StaleAfter: staleAfter, Registry: reg, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Publish: func(doc map[string]any) error { _, err := store.SetUpstream(doc); return err },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(2 * time.Second):
			t.Error("Serve did not return within 2 s of its context's end")
		}
	})
	return p, store, reg
}

// The poller publishes the game server's answer; stale until the first
// one; a server gone quiet is stale after stale_after and the state stays;
// an unreadable answer keeps the state and counts as bad; the next good
// answer makes it live again, with the new state.
func TestPollerLifecycle(t *testing.T) {
	up := newFakeQ3(t)
	up.mode.Store("silent")
	var logs syncBuffer
	p, store, reg := startPoller(t, Quake3, up.addr, 300*time.Millisecond, &logs)
	if !p.Stale(time.Now()) {
		t.Fatal("live before the game server ever answered")
	}
	waitFor(t, "a silent poll", func() bool { return counter(t, reg, "queryd_upstream_polls_total", OutcomeSilent) >= 1 })
	if store.Snapshot().Name != "config" || !p.Stale(time.Now()) {
		t.Fatal("a silent game server changed the state or made it live")
	}
	if st := p.Status(); st.Protocol != Quake3 || st.Address != up.addr || !st.LastAnswer.IsZero() || st.LastError == "" {
		t.Errorf("Status before an answer: %+v", st)
	}

	up.mode.Store("answer")
	waitFor(t, "the first answer", func() bool { return store.Snapshot().Name == "fake q3" })
	snap := store.Snapshot()
	if snap.Map != "q3dm17" || snap.MaxPlayers != 16 || len(snap.Players) != 2 || snap.Bots() != 1 || p.Stale(time.Now()) {
		t.Fatalf("published %+v, stale %v", snap, p.Stale(time.Now()))
	}
	if counter(t, reg, "queryd_upstream_round_trip_seconds", "") < 1 || counter(t, reg, "queryd_upstream_answer_age_seconds", "") > 1 {
		t.Error("no round trip observed, or an old answer")
	}
	if st := p.Status(); st.LastAnswer.IsZero() || st.RTT <= 0 || st.LastError != "" || st.Partial != "" {
		t.Errorf("Status after an answer: %+v", st)
	}

	// The same answer again publishes nothing new.
	v := snap.Version
	n := counter(t, reg, "queryd_upstream_polls_total", OutcomeAnswered)
	waitFor(t, "two more answers", func() bool { return counter(t, reg, "queryd_upstream_polls_total", OutcomeAnswered) >= n+2 })
	if store.Snapshot().Version != v {
		t.Errorf("an unchanged answer made version %d from %d", store.Snapshot().Version, v)
	}

	up.mode.Store("garbage")
	waitFor(t, "a bad answer", func() bool { return counter(t, reg, "queryd_upstream_polls_total", OutcomeBadAnswer) >= 1 })
	waitFor(t, "stale after 300 ms of bad answers", func() bool { return p.Stale(time.Now()) })
	if store.Snapshot().Version != v {
		t.Error("a bad answer changed the state")
	}

	up.hostname.Store("back again")
	up.mode.Store("answer")
	waitFor(t, "live again", func() bool { return !p.Stale(time.Now()) && store.Snapshot().Name == "back again" })
	for _, want := range []string{
		"the game server did not answer", "the game server answered: serving its state",
		"the game server's answer could not be read", "the game server has not answered for stale_after",
		"the game server answers again",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log has no %q:\n%s", want, logs.String())
		}
	}
}

// With stale_after 0 the poller is never stale, not even before an answer.
func TestPollerNeverStale(t *testing.T) {
	up := newFakeQ3(t)
	up.mode.Store("silent")
	p, _, _ := startPoller(t, Quake3, up.addr, 0, io.Discard)
	if p.Stale(time.Now()) || p.Stale(time.Now().Add(time.Hour)) {
		t.Fatal("stale with stale_after 0")
	}
}

// A poller whose Serve never ran (the daemon failed to start) closes its
// socket when Serve is called with an ended context.
func TestPollerClosedUnserved(t *testing.T) {
	up := newFakeQ3(t)
	p, err := New(Config{Protocol: A2S, Address: up.addr, Publish: func(map[string]any) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Serve(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.src.poll(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("poll after Serve: %v, want a closed socket", err)
	}
	if up.received.Load() != 0 {
		t.Errorf("%d datagrams sent by a poller that never served", up.received.Load())
	}
}

// New refuses an unknown protocol and a missing publish function.
func TestNewRefuses(t *testing.T) {
	for _, c := range []Config{
		{Protocol: "gamespy4", Address: "127.0.0.1:1", Publish: func(map[string]any) error { return nil }},
		{Protocol: A2S, Address: "127.0.0.1:1"},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

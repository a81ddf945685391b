package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/internal/testkit"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// scripted is a protocol whose game server answers what mode says: the
// poller's own behaviour (publishing, partial answers, staleness, its
// outcomes and Status) does not depend on the protocol, so these tests
// script the answers; each module's tests poll real sockets.
type scripted struct {
	mu       sync.Mutex
	mode     string // "answer", "silent", "bad", "partial", "invalid"
	hostname string
	polls    atomic.Int64
}

// badAnswer is a module.BadAnswer, as the modules' clients return.
type badAnswer struct{}

func (badAnswer) Error() string     { return "scripted: no backslash" }
func (badAnswer) BadAnswer() string { return "no backslash" }

func newScripted(mode string) *scripted { return &scripted{mode: mode, hostname: "scripted"} }

func (s *scripted) set(mode, hostname string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode, s.hostname = mode, hostname
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Poll(ctx context.Context, _ netip.AddrPort, _ module.PollOptions) (module.Polled, error) {
	s.polls.Add(1)
	s.mu.Lock()
	mode, name := s.mode, s.hostname
	s.mu.Unlock()
	doc := map[string]any{
		"name": name, "map": "q3dm17", "max_players": json.Number("16"),
		"players": map[string]any{"0": map[string]any{"name": "Ann", "ping": json.Number("40")}, "1": map[string]any{"name": "Bot", "bot": true}},
		"rules":   map[string]any{"g_gametype": "0"},
	}
	switch mode {
	case "silent":
		return module.Polled{}, errors.New("scripted: receive: i/o timeout")
	case "bad":
		return module.Polled{}, module.Step(0, "getstatus", badAnswer{})
	case "invalid":
		doc["max_players"] = json.Number("-1")
	case "partial":
		doc["rules"] = map[string]any{}
		return module.Polled{Doc: doc, Unanswered: []string{"rules"}, Partial: errors.New("RULES: i/o timeout")}, nil
	}
	return module.Polled{Doc: doc}, nil
}

var upAddr = netip.MustParseAddrPort("127.0.0.1:27960")

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

// startPoller runs a poller of protocol into a store until the test ends.
func startPoller(t *testing.T, protocol module.Poller, staleAfter time.Duration, logs io.Writer) (*Poller, *state.Store, *prometheus.Registry) {
	t.Helper()
	store, err := state.NewStore(map[string]any{"name": "config"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	p, err := New(Config{
		Protocol: protocol, Address: upAddr, Interval: 50 * time.Millisecond, Timeout: 100 * time.Millisecond,
		StaleAfter: staleAfter, Registry: reg, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Publish: func(doc map[string]any) error { _, err := store.SetGameServer(doc); return err },
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
// an unreadable answer keeps the state and counts as bad, an answer the
// state refuses as rejected; the next good answer makes it live again,
// with the new state. Status follows.
func TestPollerLifecycle(t *testing.T) {
	up := newScripted("silent")
	var logs testkit.Buffer
	p, store, reg := startPoller(t, up, 300*time.Millisecond, &logs)
	if !p.Stale(time.Now()) {
		t.Fatal("live before the game server ever answered")
	}
	waitFor(t, "a silent poll", func() bool { return counter(t, reg, "queryd_upstream_polls_total", OutcomeSilent) >= 1 })
	if store.Snapshot().Name != "config" || !p.Stale(time.Now()) {
		t.Fatal("a silent game server changed the state or made it live")
	}
	if st := p.Status(); st.Protocol != "scripted" || st.Address != upAddr.String() || !st.LastAnswer.IsZero() || !strings.Contains(st.LastError, "timeout") {
		t.Errorf("Status before an answer: %+v", st)
	}

	up.set("answer", "fake q3")
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

	up.set("invalid", "refused")
	waitFor(t, "a rejected answer", func() bool { return counter(t, reg, "queryd_upstream_polls_total", OutcomeRejected) >= 1 })
	up.set("bad", "")
	waitFor(t, "a bad answer", func() bool { return counter(t, reg, "queryd_upstream_polls_total", OutcomeBadAnswer) >= 1 })
	waitFor(t, "stale after 300 ms of bad answers", func() bool { return p.Stale(time.Now()) })
	if store.Snapshot().Version != v {
		t.Error("a bad or refused answer changed the state")
	}
	if st := p.Status(); !strings.Contains(st.LastError, "no backslash") {
		t.Errorf("Status after a bad answer: %+v", st)
	}

	up.set("answer", "back again")
	waitFor(t, "live again", func() bool { return !p.Stale(time.Now()) && store.Snapshot().Name == "back again" })
	for _, want := range []string{
		"the game server did not answer", "the game server answered: serving its state",
		"the game server's answer could not be read", "the state refused the game server's answer",
		"the game server has not answered for stale_after", "the game server answers again",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log has no %q:\n%s", want, logs.String())
		}
	}
}

// A partial answer is served: the fields it names as unanswered keep their
// last answers, the poll counts as partial, and Status says what is
// missing.
func TestPollerPartial(t *testing.T) {
	up := newScripted("answer")
	p, store, reg := startPoller(t, up, time.Minute, io.Discard)
	waitFor(t, "a whole answer", func() bool { return counter(t, reg, "queryd_upstream_polls_total", OutcomeAnswered) >= 1 })
	up.set("partial", "partial now")
	waitFor(t, "a partial answer", func() bool { return counter(t, reg, "queryd_upstream_polls_total", OutcomePartial) >= 1 })
	waitFor(t, "the partial answer's name", func() bool { return store.Snapshot().Name == "partial now" })
	if r := store.Snapshot().Rules; len(r) != 1 || r[0] != (state.Rule{Key: "g_gametype", Value: "0"}) {
		t.Fatalf("rules after a partial answer: %+v, want the last answer's", r)
	}
	if st := p.Status(); !strings.Contains(st.Partial, "RULES") || st.LastError != "" || st.LastAnswer.IsZero() {
		t.Errorf("Status of a partial answer: %+v", st)
	}
}

// With stale_after 0 the poller is never stale, not even before an answer.
func TestPollerNeverStale(t *testing.T) {
	p, _, _ := startPoller(t, newScripted("silent"), 0, io.Discard)
	if p.Stale(time.Now()) || p.Stale(time.Now().Add(time.Hour)) {
		t.Fatal("stale with stale_after 0")
	}
}

// A poller whose Serve never ran (the daemon failed to start) asks
// nothing when Serve is called with an ended context.
func TestPollerClosedUnserved(t *testing.T) {
	up := newScripted("answer")
	p, err := New(Config{Protocol: up, Address: upAddr, Publish: func(map[string]any) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Serve(ctx); err != nil {
		t.Fatal(err)
	}
	if up.polls.Load() != 0 {
		t.Errorf("%d polls by a poller that never served", up.polls.Load())
	}
}

// New refuses a missing protocol, address or publish function.
func TestNewRefuses(t *testing.T) {
	publish := func(map[string]any) error { return nil }
	for _, c := range []Config{
		{Address: upAddr, Publish: publish},
		{Protocol: newScripted("answer"), Publish: publish},
		{Protocol: newScripted("answer"), Address: netip.MustParseAddrPort("127.0.0.1:0"), Publish: publish},
		{Protocol: newScripted("answer"), Address: upAddr},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

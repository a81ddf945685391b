package agones

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/internal/testkit"
	"github.com/queryd/queryd/state"
)

// harness runs a Watcher that publishes into a real state.Store, as the
// daemon will.
type harness struct {
	t     *testing.T
	w     *Watcher
	store *state.Store
	reg   *prometheus.Registry
	cfg   *Config

	mu      sync.Mutex
	changes []time.Time // when each document or class change happened
	logs    *testkit.Buffer
}

// watch starts a watcher of sdk with cfg's other settings (nil: the
// defaults) until the test ends.
func watch(t *testing.T, sdk string, cfg *Config) *harness {
	t.Helper()
	if cfg == nil {
		cfg = NewConfig()
	}
	cfg.SDK = sdk
	store, err := state.NewStore(map[string]any{"name": "base"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, store: store, reg: prometheus.NewRegistry(), cfg: cfg, logs: &testkit.Buffer{}}
	h.w, err = New(cfg, Options{
		Publish: func(doc map[string]any) error {
			_, err := store.SetGameServer(doc)
			return err
		},
		Changed: func() {
			h.mu.Lock()
			h.changes = append(h.changes, time.Now())
			h.mu.Unlock()
		},
		Logger:   slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registry: h.reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.w.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return 10s after its context ended")
		}
		if t.Failed() {
			t.Logf("watcher log:\n%s", h.logs)
		}
	})
	return h
}

// until waits up to within for cond to hold on the watcher's status and
// the store's snapshot, and returns how long that took; it fails the test
// when it does not hold in time.
func (h *harness) until(within time.Duration, what string, cond func(Status, *state.Snapshot) bool) time.Duration {
	h.t.Helper()
	start := time.Now()
	for {
		if cond(h.w.Status(), h.store.Snapshot()) {
			return time.Since(start)
		}
		if time.Since(start) > within {
			s := h.w.Status()
			h.t.Fatalf("%s: not within %s: status %+v, document %v", what, within, s, h.w.Doc())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// reads returns queryd_agones_reads_total{source, outcome}.
func (h *harness) reads(source, outcome string) float64 {
	return h.metric("queryd_agones_reads_total", "source", source, "outcome", outcome)
}

// metric returns the value of the series of name with the label pairs
// given (a counter or a gauge; 0 when there is none).
func (h *harness) metric(name string, labels ...string) float64 {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, l := range m.GetLabel() {
					found = found || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
				}
				if !found {
					continue series
				}
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// names returns the snapshot's player names in order.
func names(s *state.Snapshot) []string {
	out := []string{}
	for _, p := range s.Players {
		out = append(out, p.Name)
	}
	return out
}

// ruleValue returns the snapshot's rule k ("" when absent).
func ruleValue(s *state.Snapshot, k string) string {
	for _, r := range s.Rules {
		if r.Key == k {
			return r.Value
		}
	}
	return ""
}

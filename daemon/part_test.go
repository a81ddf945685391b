package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// orderPart records when it stops.
type orderPart struct {
	name string
	mu   *sync.Mutex
	log  *[]string
	fail chan error
}

func (p orderPart) Name() string { return p.name }

func (p orderPart) Serve(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case err := <-p.fail:
		return err
	}
	p.mu.Lock()
	*p.log = append(*p.log, p.name)
	p.mu.Unlock()
	return nil
}

// TestSupervisorStopsInReverse: parts stop last started first, each after
// the later ones have returned; the first failure is the one reported.
func TestSupervisorStopsInReverse(t *testing.T) {
	var mu sync.Mutex
	var stopped []string
	s := newSupervisor(slog.New(slog.NewTextHandler(io.Discard, nil)))
	fail := make(chan error, 2)
	for _, n := range []string{"feed", "udp", "service", "admin"} {
		p := orderPart{name: n, mu: &mu, log: &stopped}
		if n == "service" {
			p.fail = fail
		}
		s.start(p)
	}
	fail <- errors.New("first")
	var err error
	select {
	case err = <-s.failed():
	case <-time.After(2 * time.Second):
		t.Fatal("no failure reported")
	}
	if err.Error() != "service: first" {
		t.Fatalf("failure %q, want the part's name and error", err)
	}
	s.stop()
	s.stop() // once
	if got := strings.Join(stopped, ","); got != "admin,udp,feed" {
		t.Fatalf("stopped %s, want admin,udp,feed (the failed service had returned)", got)
	}
}

// TestFuncPartEndingAloneIsFailure: a serve function that returns nil
// before its part is stopped has stopped by itself, which is a failure.
func TestFuncPartEndingAloneIsFailure(t *testing.T) {
	p := funcPart{name: "x", serve: func() error { return nil }, stop: func() error { return nil }}
	if err := p.Serve(context.Background()); err == nil {
		t.Fatal("a part that ended by itself reported no error")
	}
}

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

// TestStopErrorLogged: what goes wrong while a part stops is logged through
// the daemon's logger (so with [log] format = "json", as JSON); it went to
// the global slog logger, as a text line, before.
func TestStopErrorLogged(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
	s := newSupervisor(log)
	block := make(chan struct{})
	s.start(funcPart{name: "fp", serve: func() error { <-block; return nil }, stop: func() error { close(block); return errors.New("close failed") }})
	s.start(bgPart{name: "bg", stop: func() error { return errors.New("bg close failed") }})
	s.stop()
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	for _, want := range []string{`"msg":"stopping","part":"fp","err":"close failed"`, `"msg":"stopping","part":"bg","err":"bg close failed"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the daemon's JSON log lacks %s:\n%s", want, out)
		}
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

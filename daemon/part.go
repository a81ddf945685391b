package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
)

// part is one long-running piece of the daemon (module.Service has the
// same shape): made ready to serve, then Serve runs it until ctx is done
// (nil, or what went wrong while stopping, which the supervisor logs) or it
// fails for good (the error).
type part interface {
	Name() string
	Serve(ctx context.Context) error
}

// funcPart runs serve, which blocks until stop makes it return; an error
// from serve before ctx is done (or a return without one) is a failure.
type funcPart struct {
	name  string
	serve func() error
	stop  func() error
}

func (p funcPart) Name() string { return p.name }

func (p funcPart) Serve(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- p.serve() }()
	select {
	case err := <-done:
		if err == nil {
			err = errors.New("stopped by itself")
		}
		return err
	case <-ctx.Done():
		err := p.stop()
		<-done
		return err
	}
}

// bgPart is a part whose work runs on goroutines of its own (the UDP
// receive loops, relay sessions): start begins it, stop ends it. It cannot
// fail for good.
type bgPart struct {
	name  string
	start func() // nil: nothing to start
	stop  func() error
}

func (p bgPart) Name() string { return p.name }

func (p bgPart) Serve(ctx context.Context) error {
	if p.start != nil {
		p.start()
	}
	<-ctx.Done()
	return p.stop()
}

// supervisor runs parts until its context ends or one fails; it stops them
// in reverse start order, each after the ones started after it have
// returned (heartbeats send their flatline before the UDP socket closes).
// An error a part returns once stopped is logged to log, the daemon's.
type supervisor struct {
	log   *slog.Logger
	parts []runningPart
	fail  chan error // the first failure
	once  sync.Once
}

type runningPart struct {
	part   part
	cancel context.CancelFunc
	done   chan struct{}
}

func newSupervisor(log *slog.Logger) *supervisor {
	return &supervisor{log: log, fail: make(chan error, 1)}
}

// start runs p in the background.
func (s *supervisor) start(p part) {
	ctx, cancel := context.WithCancel(context.Background())
	rp := runningPart{part: p, cancel: cancel, done: make(chan struct{})}
	s.parts = append(s.parts, rp)
	go func() {
		defer close(rp.done)
		err := p.Serve(ctx)
		switch {
		case err == nil:
		case ctx.Err() == nil:
			select {
			case s.fail <- fmt.Errorf("%s: %w", p.Name(), err):
			default: // the first failure is the reason
			}
		default:
			s.log.Warn("stopping", "part", p.Name(), "err", err)
		}
	}()
}

// failed delivers the first part failure.
func (s *supervisor) failed() <-chan error { return s.fail }

// stop ends every part, last started first, once.
func (s *supervisor) stop() {
	s.once.Do(func() {
		for i := len(s.parts) - 1; i >= 0; i-- {
			s.parts[i].cancel()
			<-s.parts[i].done
		}
	})
}

var (
	_ part = funcPart{}
	_ part = bgPart{}
)

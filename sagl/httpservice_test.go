package sagl

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/module"
)

func testHTTPService(t *testing.T) *httpService {
	t.Helper()
	s := NewSection()
	s.HTTP = netip.MustParseAddrPort("127.0.0.1:0")
	env := module.Env{
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Registry: prometheus.NewRegistry(),
		Silent:   func(time.Time) bool { return false },
	}
	h, err := newHTTPService(s, env, func() *Handler { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHTTPServiceFailsWhenItsListenerBreaks: the service's Serve returns
// the error that stopped its listener (which stops the daemon: the
// daemon's TestServiceFailureStopsDaemon), and nil when it is stopped.
func TestHTTPServiceFailsWhenItsListenerBreaks(t *testing.T) {
	h := testHTTPService(t)
	done := make(chan error, 1)
	go func() { done <- h.Serve(context.Background()) }()
	h.ln.Listener.Close() // broken under the server, not stopped by it
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Serve returned nil after its listener broke")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Serve did not return after its listener broke")
	}

	h = testHTTPService(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- h.Serve(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after its context ended: %v, want nil", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

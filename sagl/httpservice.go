package sagl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/netlimit"
)

// httpService serves the SAGL JSON and logo over HTTP ([sagl] http). At
// most maxConns connections are open at once: past ¾ of them, idle
// connections are closed oldest first as new ones arrive (netlimit.Shedder),
// and a connection over the cap gets a 503 and is closed at once. Accept
// waits out descriptor and memory shortages (netlimit.Listener). Its
// listener is opened when it is made, so that a start fails at once.
type httpService struct {
	log  *slog.Logger
	srv  *http.Server
	ln   *netlimit.Listener
	shed *netlimit.Shedder
}

var _ module.Service = (*httpService)(nil)

// newHTTPService opens [sagl] http and registers the service's metrics.
// current returns the live SAGL handler (nil while SAGL is off).
func newHTTPService(s *Section, env module.Env, current func() *Handler) (*httpService, error) {
	raw, err := net.Listen("tcp", s.HTTP.String())
	if err != nil {
		return nil, fmt.Errorf("sagl http listen %s: %w", s.HTTP, err)
	}
	h := &httpService{
		log: env.Log.With("part", "sagl-http"),
		srv: &http.Server{
			Handler:           &HTTP{Current: current, Silent: env.Silent},
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       time.Duration(s.HTTPIdleTimeout),
			MaxHeaderBytes:    16 << 10,
		},
	}
	h.ln = &netlimit.Listener{Listener: raw, Max: s.HTTPMaxConns, Reject: reject, Logger: h.log}
	h.shed = &netlimit.Shedder{Listener: h.ln}
	h.srv.ConnState = h.shed.ConnState
	if err := h.register(env.Registry); err != nil {
		raw.Close()
		return nil, err
	}
	h.log.Info("listening", "http", raw.Addr().String(), "max_conns", s.HTTPMaxConns)
	return h, nil
}

// Name is the service's label in logs.
func (h *httpService) Name() string { return "sagl-http" }

// Serve serves until ctx is done (then lets requests in flight finish for
// a second), or returns the error that stopped the listener.
func (h *httpService) Serve(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- h.srv.Serve(h.ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		h.srv.Shutdown(sctx)
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// Addr returns the bound address (useful with port 0).
func (h *httpService) Addr() string { return h.ln.Addr().String() }

// tooMany is the whole answer to a connection over the cap.
const tooMany = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n" +
	"Content-Length: 21\r\nRetry-After: 1\r\n\r\ntoo many connections\n"

// reject answers a connection over the cap with a 503 and closes it. It
// runs in the accept loop: the write goes to an empty socket buffer and
// cannot block for long.
func reject(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	c.Write([]byte(tooMany))
	c.Close()
}

// register exports the listener's and the shedder's counts.
func (h *httpService) register(reg prometheus.Registerer) error {
	cs := []prometheus.Collector{prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_sagl_http_connections",
		Help: "SAGL HTTP connections open now (at most [sagl] http_max_conns).",
	}, func() float64 { return float64(h.ln.Open()) })}
	closed := func(reason string, n func() uint64) {
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "queryd_sagl_http_closed_total",
			Help:        "SAGL HTTP connections closed by queryd to stay under its cap: over_cap (a 503 at the cap), idle (idle ones shed past 3/4 of the cap).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(n()) }))
	}
	closed("over_cap", h.ln.Rejected)
	closed("idle", h.shed.Shed)
	cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "queryd_sagl_http_accept_retries_total",
		Help: "SAGL HTTP accepts that failed for want of descriptors, buffers or memory and were retried.",
	}, func() float64 { return float64(h.ln.Retried()) }))
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("sagl http metrics: %w", err)
		}
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/netlimit"
	"github.com/queryd/queryd/sagl"
)

func servicesSAGL(c *config.Config, d *daemon) ([]service, error) {
	if !c.SAGL.Enabled || c.SAGL.HTTP == "" {
		return nil, nil
	}
	s := &saglHTTP{
		addr:     c.SAGL.HTTP,
		MaxConns: c.SAGL.HTTPMaxConns,
		log:      d.log.With("part", "sagl-http"),
		srv: &http.Server{
			Handler:           &sagl.HTTP{Current: d.currentSAGL, Silent: d.feed.Stale},
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       time.Duration(c.SAGL.HTTPIdleTimeout),
			MaxHeaderBytes:    16 << 10,
		},
	}
	s.register(d.reg)
	return []service{s}, nil
}

// saglHTTP serves the SAGL JSON and logo over HTTP ([sagl] http). At most
// MaxConns connections are open at once: past ¾ of them, idle connections
// are closed oldest first as new ones arrive (netlimit.Shedder), and a
// connection over the cap gets a 503 and is closed at once. Accept waits
// out descriptor and memory shortages (netlimit.Listener).
type saglHTTP struct {
	addr string
	// MaxConns caps the open connections ([sagl] http_max_conns); the
	// daemon may lower it to fit its descriptor budget before Start.
	MaxConns int
	log      *slog.Logger
	srv      *http.Server
	ln       *netlimit.Listener
	shed     *netlimit.Shedder
}

// Start opens the listener and serves in the background.
func (s *saglHTTP) Start() error {
	raw, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("sagl http listen %s: %w", s.addr, err)
	}
	s.ln.Listener, s.ln.Max, s.ln.Logger = raw, s.MaxConns, s.log
	s.srv.ConnState = s.shed.ConnState
	go func() {
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("stopped", "err", err)
		}
	}()
	s.log.Info("listening", "http", raw.Addr().String(), "max_conns", s.MaxConns)
	return nil
}

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

// register makes the listener and its shedder (before Start) and exports
// their counts.
func (s *saglHTTP) register(reg prometheus.Registerer) {
	s.ln = &netlimit.Listener{Reject: reject}
	s.shed = &netlimit.Shedder{Listener: s.ln}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_sagl_http_connections",
		Help: "SAGL HTTP connections open now (at most [sagl] http_max_conns).",
	}, func() float64 { return float64(s.ln.Open()) }))
	closed := func(reason string, n func() uint64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "queryd_sagl_http_closed_total",
			Help:        "SAGL HTTP connections closed by queryd to stay under its cap: over_cap (a 503 at the cap), idle (idle ones shed past 3/4 of the cap).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(n()) }))
	}
	closed("over_cap", s.ln.Rejected)
	closed("idle", s.shed.Shed)
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "queryd_sagl_http_accept_retries_total",
		Help: "SAGL HTTP accepts that failed for want of descriptors, buffers or memory and were retried.",
	}, func() float64 { return float64(s.ln.Retried()) }))
}

// Addr returns the bound address (useful with port 0).
func (s *saglHTTP) Addr() string { return s.ln.Addr().String() }

// Close stops the listener, letting requests in flight finish for a second.
func (s *saglHTTP) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/queryd/queryd/daemon/status"
	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/netlimit"
)

// adminServer serves /metrics, /healthz and the status page.
type adminServer struct {
	srv   *http.Server
	ln    *netlimit.Listener
	shed  *netlimit.Shedder
	guard *adminGuard
}

// The admin listener's timeouts: short, so that a connection an outsider
// opens and leaves idle is closed soon even when nothing sheds it.
const (
	adminReadHeaderTimeout = 2 * time.Second
	adminIdleTimeout       = 5 * time.Second
)

// newAdmin opens [admin] listen (nil when it is off).
func (d *Daemon) newAdmin() (part, error) {
	if !d.adminOn() {
		return nil, nil
	}
	a, err := startAdmin(d.main.Admin.Listen.String(), d)
	if err != nil {
		return nil, err
	}
	d.admin = a
	return funcPart{name: "admin", serve: a.serve, stop: a.Close}, nil
}

// startAdmin opens the admin listener. At most adminMaxConns connections
// are open at once; past adminMaxConns-1, every new connection closes the
// one idle longest (netlimit.Shedder), so one slot is always free for a
// health check however many idle keep-alive connections an outsider
// holds; accept waits out descriptor and memory shortages. Every route is
// behind the Host check, the security headers and the per-client rate
// (adminGuard).
func startAdmin(addr string, d *Daemon) (*adminServer, error) {
	raw, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listen %s: %w", addr, err)
	}
	ln := &netlimit.Listener{Listener: raw, Max: adminMaxConns, Logger: d.log.With("part", "admin")}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{}))
	status.RegisterHost(mux, status.Host{Sampler: d.sampler, Servers: d.serversJSON, Down: d.downError, Count: d.serverCount}) // GET /, /status.json, /servers.json
	mux.HandleFunc("GET /healthz", d.serveHealthz)
	mux.HandleFunc("GET /healthz/{server}", d.serveServerHealthz)
	a := &adminServer{ln: ln, shed: &netlimit.Shedder{Listener: ln, Threshold: adminMaxConns - 1, Unproven: true}}
	a.guard = newAdminGuard(mux, d.main.Admin.AllowedHosts, a.shed)
	a.srv = &http.Server{
		Handler:           a.guard,
		ReadHeaderTimeout: adminReadHeaderTimeout,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       adminIdleTimeout,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(d.log.With("part", "admin").Handler(), slog.LevelDebug),
	}
	a.srv.ConnState = a.shed.ConnState
	a.srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, &adminConn{Conn: c})
	}
	if err := a.register(d.reg); err != nil {
		raw.Close()
		return nil, err
	}
	d.log.Info("admin listening", "http", ln.Addr().String())
	return a, nil
}

// serve serves until Close; another end is the admin listener failing.
func (a *adminServer) serve() error {
	if err := a.srv.Serve(a.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close stops the admin listener.
func (a *adminServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return a.srv.Shutdown(ctx)
}

// register exports the admin listener's connections and what it refused.
func (a *adminServer) register(reg prometheus.Registerer) error {
	cs := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "queryd_admin_connections",
			Help: "Admin listener connections open now (at most 64).",
		}, func() float64 { return float64(a.ln.Open()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "queryd_admin_idle_closed_total",
			Help: "Idle admin connections closed to keep a slot free for a new one.",
		}, func() float64 { return float64(a.shed.Shed()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "queryd_admin_accept_retries_total",
			Help: "Admin accepts that failed for want of descriptors, buffers or memory and were retried.",
		}, func() float64 { return float64(a.ln.Retried()) }),
	}
	for reason, n := range map[string]*atomic.Uint64{"host": &a.guard.refusedHost, "rate_limited": &a.guard.limited} {
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "queryd_admin_refused_total",
			Help:        "Admin requests refused: host (a Host that is not an IP address, localhost or an [admin] allowed_hosts name: 421), rate_limited (over the per-client rate: 429).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(n.Load()) }))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("admin metrics: %w", err)
		}
	}
	return nil
}

// registerStateMetrics exports the server's state version and feed
// staleness.
func registerStateMetrics(reg prometheus.Registerer, s *Server) (err error) {
	defer func() { // MustRegister panics; a server's start fails instead
		if r := recover(); r != nil {
			err = fmt.Errorf("state metrics: %v", r)
		}
	}()
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_state_version",
		Help: "Version of the current state snapshot (increases with every accepted feed change).",
	}, func() float64 { return float64(s.store.Snapshot().Version) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_state_players",
		Help: "Players in the current state.",
	}, func() float64 { return float64(len(s.store.Snapshot().Players)) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_silent",
		Help: "1 while the server is silent and answers nothing: the feed stale, or the [upstream] game server stale or not yet answered (/healthz says why).",
	}, func() float64 {
		if s.silence.silent(time.Now()) {
			return 1
		}
		return 0
	}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_feed_stale",
		Help: "1 while the feed is stale (the server is then silent: queryd_silent).",
	}, func() float64 {
		if s.feed.Stale(time.Now()) {
			return 1
		}
		return 0
	}))
	registerFeedMetrics(reg, s.feed)
	return nil
}

// registerFeedMetrics exports what the feed holds and the connections its
// limits closed.
func registerFeedMetrics(reg prometheus.Registerer, f *feed.Server) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_feed_connections",
		Help: "Feed connections open ([feed] max_conns caps them).",
	}, func() float64 { return float64(f.Stats().Open) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_feed_buffered_bytes",
		Help: "Bytes held by unfinished feed lines beyond each connection's 4 KiB read buffer ([feed] max_buffered caps them).",
	}, func() float64 { return float64(f.Stats().Buffered) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "queryd_feed_accept_retries_total",
		Help: "Feed accepts that failed for want of descriptors or memory and were retried.",
	}, func() float64 { return float64(f.Stats().AcceptWait) }))
	for _, reason := range feed.DropReasons {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "queryd_feed_dropped_connections_total",
			Help:        "Feed connections closed by queryd with an error line, by the limit they hit.",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(f.Stats().Dropped[reason]) }))
	}
}

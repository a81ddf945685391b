package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/queryd/queryd/netlimit"

	"github.com/queryd/queryd/feed"
)

// adminServer serves /metrics, /healthz and the status page.
type adminServer struct {
	srv *http.Server
	ln  net.Listener
}

// newAdmin opens [admin] listen (nil when it is off).
func (d *Daemon) newAdmin() (part, error) {
	if !d.cfg.Admin.Listen.IsValid() {
		return nil, nil
	}
	a, err := startAdmin(d.cfg.Admin.Listen.String(), d)
	if err != nil {
		return nil, err
	}
	d.admin = a
	return funcPart{name: "admin", serve: a.serve, stop: a.Close}, nil
}

func startAdmin(addr string, d *Daemon) (*adminServer, error) {
	raw, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listen %s: %w", addr, err)
	}
	// At most adminMaxConns at once (more wait in the backlog); accept
	// waits out descriptor and memory shortages.
	ln := &netlimit.Listener{Listener: raw, Max: adminMaxConns, Logger: d.log.With("part", "admin")}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{}))
	if d.status != nil {
		d.status.Register(mux) // GET /, /status.json (daemon/status)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		stale := d.stale(now)
		w.Header().Set("Content-Type", "application/json")
		if stale {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(map[string]any{
			"ok":      !stale,
			"version": d.store.Snapshot().Version,
			"stale":   stale,
		})
	})
	a := &adminServer{ln: ln, srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}}
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

// registerStateMetrics exports the state version and feed staleness.
func registerStateMetrics(reg *prometheus.Registry, d *Daemon) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_state_version",
		Help: "Version of the current state snapshot (increases with every accepted feed change).",
	}, func() float64 { return float64(d.store.Snapshot().Version) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_state_players",
		Help: "Players in the current state.",
	}, func() float64 { return float64(len(d.store.Snapshot().Players)) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_feed_stale",
		Help: "1 while the feed is stale and queryd answers nothing.",
	}, func() float64 {
		if d.feed.Stale(time.Now()) {
			return 1
		}
		return 0
	}))
	registerFeedMetrics(reg, d.feed)
}

// registerFeedMetrics exports what the feed holds and the connections its
// limits closed.
func registerFeedMetrics(reg *prometheus.Registry, f *feed.Server) {
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

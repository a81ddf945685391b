package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// adminServer serves /metrics and /healthz.
type adminServer struct {
	srv *http.Server
	ln  net.Listener
}

func startAdmin(addr string, d *daemon) (*adminServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		stale := d.feed.Stale(now)
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
	go a.srv.Serve(ln)
	d.log.Info("admin listening", "http", ln.Addr().String())
	return a, nil
}

// Close stops the admin listener.
func (a *adminServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return a.srv.Shutdown(ctx)
}

// registerStateMetrics exports the state version and feed staleness.
func registerStateMetrics(reg *prometheus.Registry, d *daemon) {
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
}

package daemon

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/feed"
)

// newFeedHTTP opens [feed] http, the loopback HTTP feed (nil when it is
// off). It serves the same messages as the feed socket, through it.
func (s *Server) newFeedHTTP() (part, error) {
	c := s.cfg.Feed
	if !c.HTTP.IsValid() {
		return nil, nil
	}
	h, err := s.feed.ListenHTTP(feed.HTTPConfig{Addr: c.HTTP, TokenFile: c.HTTPTokenFile, MaxConns: c.HTTPMaxConns})
	if err != nil {
		return nil, err
	}
	s.feedHTTP = h
	registerFeedHTTPMetrics(s.reg, h)
	return funcPart{name: "feed-http", serve: h.Serve, stop: h.Close}, nil
}

// FeedHTTPAddr returns the first server's HTTP feed address, or "" when
// it is off.
func (d *Daemon) FeedHTTPAddr() string { return d.first().FeedHTTPAddr() }

// reloadFeedToken reads the HTTP feed's token file again (SIGHUP); a file
// that is no longer valid is logged and the token in use kept.
func (s *Server) reloadFeedToken() {
	if s.feedHTTP == nil {
		return
	}
	if err := s.feedHTTP.ReloadToken(); err != nil {
		s.log.Error("SIGHUP: keeping the HTTP feed's token", "err", err)
		return
	}
	s.log.Info("SIGHUP: HTTP feed token read again")
}

// registerFeedHTTPMetrics exports the HTTP feed's connections and answers.
func registerFeedHTTPMetrics(reg prometheus.Registerer, h *feed.HTTPServer) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_feed_http_connections",
		Help: "HTTP feed connections open now (at most [feed] http_max_conns).",
	}, func() float64 { return float64(h.Stats().Open) }))
	closed := func(reason string, n func(feed.HTTPStats) uint64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "queryd_feed_http_closed_total",
			Help:        "HTTP feed connections closed by queryd to stay under its cap: over_cap (a 503 at the cap), idle (idle ones shed past 3/4 of the cap).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(n(h.Stats())) }))
	}
	closed("over_cap", func(s feed.HTTPStats) uint64 { return s.OverCap })
	closed("idle", func(s feed.HTTPStats) uint64 { return s.Shed })
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "queryd_feed_http_accept_retries_total",
		Help: "HTTP feed accepts that failed for want of descriptors or memory and were retried.",
	}, func() float64 { return float64(h.Stats().AcceptWait) }))
	for _, code := range feed.HTTPCodes {
		label := prometheus.Labels{"code": strconv.Itoa(code)}
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "queryd_feed_http_responses_total",
			Help:        "HTTP feed answers by status code (401: a missing or wrong token).",
			ConstLabels: label,
		}, func() float64 { return float64(h.Stats().Responses[label["code"]]) }))
	}
}

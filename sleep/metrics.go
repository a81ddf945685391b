package sleep

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Reasons a game datagram is dropped by the sleep gate
// (queryd_sleep_dropped_total's).
const (
	dropHeldOver   = "held_over"   // held, then dropped (oldest first) to stay within the hold's bounds
	dropNoWake     = "no_wake"     // asleep and no wake may begin (wakes_per_hour spent, or a failed wake being cleaned up)
	dropWakeFailed = "wake_failed" // held for a wake that failed
	dropQuery      = "query"       // a query of a protocol that is off, while the server rests: no join
)

// DropReasons are the reasons in order.
var DropReasons = []string{dropHeldOver, dropNoWake, dropWakeFailed, dropQuery}

// metrics are a Sleeper's Prometheus metrics (docs/metrics.md).
type metrics struct {
	wakes   *prometheus.CounterVec // by cause
	fails   *prometheus.CounterVec // by reason
	refused prometheus.Counter
	stops   *prometheus.CounterVec // by result
	drops   *prometheus.CounterVec // by reason
	took    prometheus.Histogram
}

func (m *metrics) register(reg prometheus.Registerer, s *Sleeper) error {
	m.wakes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "queryd_sleep_wakes_total",
		Help: "Wakes begun ([sleep]: start run), by cause: join (a player's game datagram), feed (the feed's wake).",
	}, []string{"cause"})
	m.fails = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "queryd_sleep_wake_failures_total",
		Help: "Wakes that failed, by reason: start_failed (start exited non-zero), start_timeout (start still running at ready_timeout: killed), not_ready (the game server did not answer by ready_timeout). The server is stopped again and answers as asleep.",
	}, []string{"reason"})
	m.refused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "queryd_sleep_wakes_refused_total",
		Help: "Wakes asked for and not begun: wakes_per_hour wakes had begun in the hour before.",
	})
	m.stops = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "queryd_sleep_stops_total",
		Help: "stop commands run after the server had no players for after, by result (ok: asleep; failed: taken to run, tried again later).",
	}, []string{"result"})
	m.drops = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "queryd_sleep_dropped_total",
		Help: "Game datagrams dropped while the game server slept or woke, by reason: held_over (past the hold's bounds, oldest first), no_wake (no wake could begin), wake_failed (held for a wake that failed), query (a query of a protocol that is off, which never wakes it).",
	}, []string{"reason"})
	m.took = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "queryd_sleep_wake_seconds",
		Help:    "Time from a wake's start to the game server's first answer, for wakes that succeeded.",
		Buckets: []float64{.25, .5, 1, 2, 5, 10, 20, 30, 60, 120, 300},
	})
	coll := []prometheus.Collector{m.wakes, m.fails, m.refused, m.stops, m.drops, m.took, phaseCollector{s},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "queryd_sleep_asleep_since_timestamp_seconds",
			Help: "Unix time the server's rest began (its stop), while it is asleep (or stopping, or waking); 0 while its game server runs.",
		}, func() float64 {
			t := s.opts.Rest.Since()
			if t.IsZero() {
				return 0
			}
			return float64(t.UnixNano()) / 1e9
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "queryd_sleep_held_datagrams",
			Help: "Game datagrams held now for the game server that wakes (hold_total bounds them).",
		}, func() float64 { n, _ := s.held(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "queryd_sleep_held_bytes",
			Help: "Bytes of the game datagrams held now (hold_bytes bounds them).",
		}, func() float64 { _, b := s.held(); return float64(b) }),
	}
	for _, c := range coll {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	for _, c := range Causes {
		m.wakes.WithLabelValues(c.String()) // at 0 from the start, for rate() and alerts
	}
	for _, r := range FailReasons {
		m.fails.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "failed"} {
		m.stops.WithLabelValues(r)
	}
	for _, r := range DropReasons {
		m.drops.WithLabelValues(r)
	}
	return nil
}

// dropped counts n datagrams dropped for reason.
func (m *metrics) dropped(reason string, n int) {
	if n > 0 {
		m.drops.WithLabelValues(reason).Add(float64(n))
	}
}

// held is what the hold holds now.
func (s *Sleeper) held() (n, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hold.size()
}

var phaseDesc = prometheus.NewDesc("queryd_sleep_phase",
	"1 for the phase the server's sleep cycle is in, 0 for the others: awake, idle (no players: stopped after after), stopping, asleep, waking.",
	[]string{"phase"}, nil)

// phaseCollector exports queryd_sleep_phase, read when scraped.
type phaseCollector struct{ s *Sleeper }

func (c phaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- phaseDesc }

func (c phaseCollector) Collect(ch chan<- prometheus.Metric) {
	c.s.mu.Lock()
	cur, _ := c.s.mach.Phase()
	c.s.mu.Unlock()
	for _, p := range Phases {
		v := 0.0
		if p == cur {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(phaseDesc, prometheus.GaugeValue, v, p.String())
	}
}

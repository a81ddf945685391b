package agones

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Sources of a read (label "source" of queryd_agones_reads_total).
const (
	SourceWatch = "watch" // a line of GET /watch/gameserver
	SourceGet   = "get"   // an answer to GET /gameserver
)

// metrics are the watcher's Prometheus metrics.
type metrics struct {
	reads      *prometheus.CounterVec
	reconnects prometheus.Counter
}

// register makes and registers the metrics on reg; w answers the gauges.
func (m *metrics) register(reg prometheus.Registerer, w *Watcher) error {
	m.reads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "queryd_agones_reads_total",
		Help: "Reads of the Agones SDK server by source (watch: a line of the watch stream; get: GET /gameserver) and outcome " +
			"(applied, same; refused: too_long, not_json, shape, error, timeout, rejected; failed: no answer).",
	}, []string{"source", "outcome"})
	m.reconnects = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "queryd_agones_reconnects_total",
		Help: "Times the watch stream of the Agones SDK server was opened again after it ended or could not be opened.",
	})
	watching := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_agones_watching",
		Help: "1 while the watch stream of the Agones SDK server is open.",
	}, func() float64 {
		if w.watching.Load() {
			return 1
		}
		return 0
	})
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_agones_read_age_seconds",
		Help: "Seconds since the last good read of the GameServer from the Agones SDK server (+Inf until the first).",
	}, func() float64 {
		last := w.LastRead()
		if last.IsZero() {
			return math.Inf(1)
		}
		return time.Since(last).Seconds()
	})
	for _, c := range []prometheus.Collector{m.reads, m.reconnects, watching, age} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	for _, src := range []string{SourceWatch, SourceGet} {
		for _, o := range Outcomes {
			m.reads.WithLabelValues(src, o) // at 0 from the start, for rate() and alerts
		}
	}
	return nil
}

package upstream

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a poll (label "outcome" of queryd_upstream_polls_total).
const (
	OutcomeAnswered  = "answered"   // a whole answer, published
	OutcomePartial   = "partial"    // answered in part (A2S: RULES not): the missing fields' last answers kept
	OutcomeSilent    = "silent"     // no answer within the timeout (or the port refused)
	OutcomeBadAnswer = "bad_answer" // an answer that could not be read: the state kept
	OutcomeRejected  = "rejected"   // the state refused the mapped answer: the state kept
)

// Outcomes lists every poll outcome.
var Outcomes = []string{OutcomeAnswered, OutcomePartial, OutcomeSilent, OutcomeBadAnswer, OutcomeRejected}

// metrics are the poller's Prometheus metrics.
type metrics struct {
	polls *prometheus.CounterVec
	rtt   prometheus.Histogram
}

// register makes and registers the metrics; p answers the gauges.
func (m *metrics) register(reg prometheus.Registerer, p *Poller) error {
	m.polls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "queryd_upstream_polls_total",
		Help: "Polls of the [upstream] game server, by outcome (answered, partial, silent, bad_answer, rejected).",
	}, []string{"outcome"})
	m.rtt = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "queryd_upstream_round_trip_seconds",
		Help:    "Time from a poll's first request to its last reply, for polls the game server answered (every request of the protocol's poll, challenges included).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	})
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_upstream_answer_age_seconds",
		Help: "Seconds since the game server's last good answer (+Inf until its first).",
	}, func() float64 {
		last := p.LastAnswer()
		if last.IsZero() {
			return math.Inf(1)
		}
		return time.Since(last).Seconds()
	})
	stale := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "queryd_upstream_stale",
		Help: "1 while the game server has not answered for [feed] stale_after (or not yet at all) and queryd answers nothing.",
	}, func() float64 {
		if p.Stale(time.Now()) {
			return 1
		}
		return 0
	})
	for _, c := range []prometheus.Collector{m.polls, m.rtt, age, stale} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	for _, o := range Outcomes {
		m.polls.WithLabelValues(o) // at 0 from the start, for rate() and alerts
	}
	return nil
}

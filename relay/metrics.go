package relay

import "github.com/prometheus/client_golang/prometheus"

// Reasons a relayed datagram is dropped (label "reason").
const (
	dropQueueFull    = iota // the session socket's send buffer is full
	dropSessionsFull        // MaxSessions reached: a new client is not let in
	dropDial                // no socket to the game server could be opened (e.g. EMFILE)
	dropSend                // a socket refused the datagram
	dropTooLarge            // over 65,535 bytes
	dropPerIPFull           // the source holds MaxPerIP sessions, none idle
	dropOpenRate            // the source opens sessions faster than OpenRate
	dropSiteFull            // the source's /24, /56 or /48 holds its share, none evictable
	dropLoop                // the source is the game server's address or this host's
	dropPassLimit           // over a pass limit (Config.Pass): the game server's global bucket is kept for queryd's poll
	numDrops
)

var dropLabels = [numDrops]string{"queue_full", "sessions_full", "dial", "send", "too_large", "per_ip_full", "open_rate", "site_full", "loop", "pass_limit"}

// The names of the relay's metrics, for the packages that read them (the
// status page, tests); docs/metrics.md describes each.
const (
	MetricPackets         = "queryd_relay_packets_total" // {direction}
	MetricBytes           = "queryd_relay_bytes_total"   // {direction}
	MetricDropped         = "queryd_relay_dropped_total" // {reason}
	MetricSessionsOpened  = "queryd_relay_sessions_opened_total"
	MetricSessionsEvicted = "queryd_relay_sessions_evicted_total"
	MetricSessions        = "queryd_relay_sessions"
	MetricSessionsProven  = "queryd_relay_sessions_proven"
)

// metrics are the relay's Prometheus counters.
type metrics struct {
	up, down           prometheus.Counter
	upBytes, downBytes prometheus.Counter
	opened, evicted    prometheus.Counter
	drops              [numDrops]prometheus.Counter
}

func (m *metrics) register(reg prometheus.Registerer, active, proven func() float64) error {
	packets := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricPackets,
		Help: "Datagrams relayed, by direction (upstream: to the game server; downstream: to clients).",
	}, []string{"direction"})
	bytes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricBytes,
		Help: "Payload bytes relayed, by direction.",
	}, []string{"direction"})
	drops := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricDropped,
		Help: "Datagrams the relay dropped, by reason.",
	}, []string{"reason"})
	opened := prometheus.NewCounter(prometheus.CounterOpts{
		Name: MetricSessionsOpened,
		Help: "Relay sessions opened (one per client address).",
	})
	evicted := prometheus.NewCounter(prometheus.CounterOpts{
		Name: MetricSessionsEvicted,
		Help: "Relay sessions ended early to let a new client in (doc.go, \"Sessions\": which ones may go).",
	})
	gauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: MetricSessions,
		Help: "Relay sessions open now.",
	}, active)
	provenGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: MetricSessionsProven,
		Help: "Relay sessions open now that have proved themselves (two-way game traffic for prove_after, or asked about with the feed's peer).",
	}, proven)
	for _, c := range []prometheus.Collector{packets, bytes, drops, opened, evicted, gauge, provenGauge} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	m.up, m.down = packets.WithLabelValues("upstream"), packets.WithLabelValues("downstream")
	m.upBytes, m.downBytes = bytes.WithLabelValues("upstream"), bytes.WithLabelValues("downstream")
	m.opened, m.evicted = opened, evicted
	for i, l := range dropLabels {
		m.drops[i] = drops.WithLabelValues(l)
	}
	return nil
}

func (m *metrics) drop(reason int) { m.drops[reason].Inc() }

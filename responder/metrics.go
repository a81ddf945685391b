package responder

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/wire"
)

// Outcome labels the responder adds to the handlers' own.
const (
	outRateLimited = int(wire.NumOutcomes) + iota // the reply would exceed a budget
	outUnknown                                    // no handler claims the datagram
	outSilent                                     // the feed is stale: nothing is answered
	outForwarded                                  // handed to the relay (relay mode)
	numOutcomes
)

func outcomeLabel(o int) string {
	switch o {
	case outRateLimited:
		return "rate_limited"
	case outUnknown:
		return "unknown"
	case outSilent:
		return "stale"
	case outForwarded:
		return "forwarded"
	}
	return wire.Outcome(o).String()
}

// Metrics are the responder's Prometheus counters, resolved per protocol and
// outcome once so that counting allocates nothing.
type Metrics struct {
	requests  *prometheus.CounterVec
	bytesIn   *prometheus.CounterVec
	bytesOut  *prometheus.CounterVec
	errors    *prometheus.CounterVec
	mu        sync.Mutex // guards adding rows
	protocols []string
	counters  [][numOutcomes]prometheus.Counter
	in, out   []prometheus.Counter
	recvErr   prometheus.Counter
	sendErr   prometheus.Counter
	truncated prometheus.Counter
}

// NewMetrics registers the responder's metrics with reg for the given
// protocol names; "unknown" is added for datagrams no handler claims.
func NewMetrics(reg prometheus.Registerer, protocols []string) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queryd_requests_total",
			Help: "UDP datagrams received, by protocol and what was done with them.",
		}, []string{"protocol", "outcome"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queryd_received_bytes_total",
			Help: "UDP payload bytes received, by protocol.",
		}, []string{"protocol"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queryd_sent_bytes_total",
			Help: "UDP payload bytes sent, by protocol.",
		}, []string{"protocol"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queryd_socket_errors_total",
			Help: "Socket errors, by operation (receive, send, truncated).",
		}, []string{"op"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.bytesIn, m.bytesOut, m.errors} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	for _, p := range append([]string{"unknown"}, protocols...) {
		m.row(p)
	}
	m.recvErr = m.errors.WithLabelValues("receive")
	m.sendErr = m.errors.WithLabelValues("send")
	m.truncated = m.errors.WithLabelValues("truncated")
	return m, nil
}

// row returns the metrics row of a protocol, adding it on first use.
// Row 0 is "unknown".
func (m *Metrics) row(protocol string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, p := range m.protocols {
		if p == protocol {
			return i
		}
	}
	var cs [numOutcomes]prometheus.Counter
	for o := range cs {
		cs[o] = m.requests.WithLabelValues(protocol, outcomeLabel(o))
	}
	m.protocols = append(m.protocols, protocol)
	m.counters = append(m.counters, cs)
	m.in = append(m.in, m.bytesIn.WithLabelValues(protocol))
	m.out = append(m.out, m.bytesOut.WithLabelValues(protocol))
	return len(m.protocols) - 1
}

package responder

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/dgram"
)

// Outcome labels the responder adds to the handlers' own.
const (
	outRateLimited  = int(dgram.NumOutcomes) + iota // the reply would exceed a budget
	outUnknown                                      // no handler claims the datagram
	outSilent                                       // queryd is silent (a source is stale): nothing is answered; label "stale"
	outForwarded                                    // handed to the relay (relay mode)
	outPanic                                        // answering it panicked; recovered, nothing sent
	outDenied                                       // the source is in [limits] deny
	outRelayDropped                                 // unclaimed, and the relay dropped it (loop, caps, queue)
	outHostLimited                                  // the reply would exceed the host-wide per-IP budget (HostBudget)
	outUnprovenShed                                 // shed by the proven-source tier: the unproven packet gate was spent (gate.go)
	numOutcomes
)

// maxRows bounds the protocols the metrics can tell apart ("unknown" included).
const maxRows = 16

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
	case outPanic:
		return "panic"
	case outDenied:
		return "denied"
	case outRelayDropped:
		return "relay_dropped"
	case outHostLimited:
		return "host_rate_limited"
	case outUnprovenShed:
		return "unproven_shed"
	}
	return dgram.Outcome(o).String()
}

var _ prometheus.Collector = (*Metrics)(nil)

// Metrics are the responder's Prometheus counters. Each receive loop counts
// into its own workerStats (no shared cache lines on the hot path); a scrape
// sums them.
type Metrics struct {
	mu        sync.Mutex
	protocols []string // row names; row 0 is "unknown"
	workers   []*workerStats
	sources   []CountSource // counts made elsewhere (the XDP fast path)

	requests, bytesIn, bytesOut, errors, gso *prometheus.Desc
}

// workerStats are one receive loop's counters.
type workerStats struct {
	req      [maxRows][numOutcomes]atomic.Uint64
	in, out  [maxRows]atomic.Uint64
	recvErr  atomic.Uint64
	sendErr  atomic.Uint64
	trunc    atomic.Uint64
	overflow atomic.Uint64 // datagrams the kernel dropped (SO_RXQ_OVFL)
	// gsoSends counts multi-datagram answers sent as one UDP GSO send;
	// gsoRefused the GSO sends the kernel refused (then sent one by one).
	gsoSends, gsoRefused atomic.Uint64
	_                    [64]byte
}

// The names of the responder's metrics, for the packages that read them
// (the status page, tests); docs/metrics.md describes each.
const (
	MetricRequests      = "queryd_requests_total"       // {protocol, outcome}
	MetricReceivedBytes = "queryd_received_bytes_total" // {protocol}
	MetricSentBytes     = "queryd_sent_bytes_total"     // {protocol}
	MetricSocketErrors  = "queryd_socket_errors_total"  // {op}
	MetricGSOSends      = "queryd_gso_sends_total"
)

// NewMetrics registers the responder's metrics with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewDesc(MetricRequests,
			"UDP datagrams received, by protocol and what was done with them.", []string{"protocol", "outcome"}, nil),
		bytesIn: prometheus.NewDesc(MetricReceivedBytes,
			"UDP payload bytes received, by protocol.", []string{"protocol"}, nil),
		bytesOut: prometheus.NewDesc(MetricSentBytes,
			"UDP payload bytes sent, by protocol.", []string{"protocol"}, nil),
		errors: prometheus.NewDesc(MetricSocketErrors,
			"Socket errors and drops, by op: receive, send, truncated (datagram larger than the buffer), overflow (dropped by the kernel: receive buffer full), gso_refused (a GSO send the kernel refused; its datagrams were then sent one by one and GSO turned off for that address).", []string{"op"}, nil),
		gso: prometheus.NewDesc(MetricGSOSends,
			"Answers of several datagrams to one client sent as one UDP GSO send (batch and uring socket layers).", nil, nil),
	}
	m.row("unknown")
	if reg != nil {
		if err := reg.Register(m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// row returns the metrics row of a protocol, adding it on first use; past
// maxRows every new name shares the last row.
func (m *Metrics) row(protocol string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, p := range m.protocols {
		if p == protocol {
			return i
		}
	}
	if len(m.protocols) == maxRows {
		return maxRows - 1
	}
	m.protocols = append(m.protocols, protocol)
	return len(m.protocols) - 1
}

// name returns the protocol of a metrics row.
func (m *Metrics) name(row int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if row < 0 || row >= len(m.protocols) {
		return "unknown"
	}
	return m.protocols[row]
}

// newWorker returns a fresh set of counters for one receive loop.
func (m *Metrics) newWorker() *workerStats {
	w := &workerStats{}
	m.mu.Lock()
	m.workers = append(m.workers, w)
	m.mu.Unlock()
	return w
}

// Counts are one protocol's counts made outside the responder (by the XDP
// fast path, which answers in the kernel), added to the responder's
// metrics at every scrape under the same names and labels.
type Counts struct {
	Protocol string
	// Requests by outcome label: "answered", "challenged", "rate_limited", "stale".
	Requests map[string]uint64
	In, Out  uint64 // payload bytes received and sent
}

// CountSource gives its Counts at every scrape.
type CountSource interface {
	Counts() []Counts
}

// AddSource adds src's counts to the metrics from now on.
func (m *Metrics) AddSource(src CountSource) {
	m.mu.Lock()
	m.sources = append(m.sources, src)
	m.mu.Unlock()
}

// external sums the sources' counts by metrics row.
func (m *Metrics) external() map[int]*pendingRow {
	m.mu.Lock()
	sources := append([]CountSource{}, m.sources...)
	m.mu.Unlock()
	if len(sources) == 0 {
		return nil
	}
	rows := map[int]*pendingRow{}
	for _, src := range sources {
		for _, c := range src.Counts() {
			r := m.row(c.Protocol)
			pr := rows[r]
			if pr == nil {
				pr = &pendingRow{}
				rows[r] = pr
			}
			for o := 0; o < numOutcomes; o++ {
				if o != int(dgram.AnsweredOpen) {
					pr.req[o] += c.Requests[outcomeLabel(o)]
				}
			}
			pr.in += c.In
			pr.out += c.Out
		}
	}
	return rows
}

// pendingRow is one protocol's counts from the sources.
type pendingRow struct {
	req     [numOutcomes]uint64
	in, out uint64
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.requests
	ch <- m.bytesIn
	ch <- m.bytesOut
	ch <- m.errors
	ch <- m.gso
}

// Collect implements prometheus.Collector: it sums every loop's counters.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	ext := m.external()
	m.mu.Lock()
	protocols := append([]string{}, m.protocols...)
	workers := append([]*workerStats{}, m.workers...)
	m.mu.Unlock()
	for r, p := range protocols {
		for o := 0; o < numOutcomes; o++ {
			if o == int(dgram.AnsweredOpen) {
				continue // counted with Answered: one "answered" label
			}
			var n uint64
			if e := ext[r]; e != nil {
				n = e.req[o]
			}
			for _, w := range workers {
				n += w.req[r][o].Load()
				if o == int(dgram.Answered) {
					n += w.req[r][dgram.AnsweredOpen].Load()
				}
			}
			ch <- prometheus.MustNewConstMetric(m.requests, prometheus.CounterValue, float64(n), p, outcomeLabel(o))
		}
		var in, out uint64
		if e := ext[r]; e != nil {
			in, out = e.in, e.out
		}
		for _, w := range workers {
			in += w.in[r].Load()
			out += w.out[r].Load()
		}
		ch <- prometheus.MustNewConstMetric(m.bytesIn, prometheus.CounterValue, float64(in), p)
		ch <- prometheus.MustNewConstMetric(m.bytesOut, prometheus.CounterValue, float64(out), p)
	}
	var recv, send, trunc, ovfl, gso, gsoRefused uint64
	for _, w := range workers {
		recv += w.recvErr.Load()
		send += w.sendErr.Load()
		trunc += w.trunc.Load()
		ovfl += w.overflow.Load()
		gso += w.gsoSends.Load()
		gsoRefused += w.gsoRefused.Load()
	}
	ch <- prometheus.MustNewConstMetric(m.errors, prometheus.CounterValue, float64(recv), "receive")
	ch <- prometheus.MustNewConstMetric(m.errors, prometheus.CounterValue, float64(send), "send")
	ch <- prometheus.MustNewConstMetric(m.errors, prometheus.CounterValue, float64(trunc), "truncated")
	ch <- prometheus.MustNewConstMetric(m.errors, prometheus.CounterValue, float64(ovfl), "overflow")
	ch <- prometheus.MustNewConstMetric(m.errors, prometheus.CounterValue, float64(gsoRefused), "gso_refused")
	ch <- prometheus.MustNewConstMetric(m.gso, prometheus.CounterValue, float64(gso))
}

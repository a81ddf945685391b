//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import "github.com/prometheus/client_golang/prometheus"

// The fast path's own metrics (what the responder's do not have); its
// answers are counted in queryd_requests_total and the bytes metrics.
var (
	descAttached = prometheus.NewDesc("queryd_xdp_attached",
		"1 for each interface the XDP fast path is attached to, with its mode (native or generic).", []string{"interface", "mode"}, nil)
	descPassed = prometheus.NewDesc("queryd_xdp_passed_total",
		"Datagrams to queryd's listen addresses that the XDP fast path passed to the socket path (the kernel), by reason: other (not a query it answers, a reply of several datagrams, a token it does not check), not_local (not to this interface's MAC or addresses), martian (a source the kernel would not answer), malformed (a header the kernel drops), vlan (it came with a VLAN tag, or may have), no_route (the route back is not through this interface, or its neighbour is unknown).", []string{"reason"}, nil)
	descResize = prometheus.NewDesc("queryd_xdp_resize_failed_total",
		"Replies the XDP fast path could not send because the driver could not resize the frame; the query went to the socket path.", nil, nil)
	descRequests = prometheus.NewDesc("queryd_xdp_requests_total",
		"Requests the XDP fast path answered or dropped, by protocol and outcome: its share of queryd_requests_total, which counts them too.", []string{"protocol", "outcome"}, nil)
	descUpdates = prometheus.NewDesc("queryd_xdp_reply_updates_total",
		"Times the XDP fast path's replies were re-published (a new snapshot, or A2S_PLAYER's durations once a second).", nil, nil)
	// divert's join reports (divert_wake_linux.go), in the server's divert collector
	descDivertJoins = prometheus.NewDesc("queryd_xdp_divert_joins_total",
		"Game datagrams (no protocol claims them) to a [listen] divert address while its server sleeps, by result: reported (to queryd, a join: it wakes the server), ring_full (not reported: queryd read the reports too slowly), rate_limited (not reported: the address's last report is under 10 ms old). All are passed to the game server's address.", []string{"result"}, nil)
)

// collector exports the host's series of the fast path (Config.Registry).
type collector struct{ f *FastPath }

// Describe implements prometheus.Collector.
func (c collector) Describe(ch chan<- *prometheus.Desc) { ch <- descAttached }

// Collect implements prometheus.Collector.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.f.mu.Lock()
	closed := c.f.closed
	c.f.mu.Unlock()
	if closed {
		return
	}
	for _, a := range c.f.links {
		ch <- prometheus.MustNewConstMetric(descAttached, prometheus.GaugeValue, 1, a.name, a.mode.String())
	}
}

// serverCollector exports one server's series (Server.Registry, which the
// daemon labels with the server's name).
type serverCollector struct {
	f *FastPath
	s *server
}

// Describe implements prometheus.Collector.
func (c serverCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descPassed
	ch <- descResize
	ch <- descRequests
	ch <- descUpdates
}

// Collect implements prometheus.Collector.
func (c serverCollector) Collect(ch chan<- prometheus.Metric) {
	st, ok := c.f.stats(c.s.index)
	c.f.mu.Lock()
	live, updates := c.f.byIndex[c.s.index] == c.s && !c.f.closed, c.s.updates
	c.f.mu.Unlock()
	if ok && live {
		for r, n := range st.Passed {
			ch <- prometheus.MustNewConstMetric(descPassed, prometheus.CounterValue, float64(n), passLabel[r])
		}
		ch <- prometheus.MustNewConstMetric(descResize, prometheus.CounterValue, float64(st.ResizeFailed))
		for _, c := range c.f.countsOf(st) {
			for outcome, n := range c.Requests {
				ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(n), c.Protocol, outcome)
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(descUpdates, prometheus.CounterValue, float64(updates))
}

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
)

// collector exports the fast path's own metrics.
type collector struct{ f *FastPath }

// Describe implements prometheus.Collector.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descAttached
	ch <- descPassed
	ch <- descResize
	ch <- descRequests
	ch <- descUpdates
}

// Collect implements prometheus.Collector.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	st, ok := c.f.stats()
	c.f.mu.Lock()
	closed, updates := c.f.closed, c.f.updates
	c.f.mu.Unlock()
	if !closed {
		for _, a := range c.f.links {
			ch <- prometheus.MustNewConstMetric(descAttached, prometheus.GaugeValue, 1, a.name, a.mode.String())
		}
	}
	if ok {
		for r, n := range st.Passed {
			ch <- prometheus.MustNewConstMetric(descPassed, prometheus.CounterValue, float64(n), passLabel[r])
		}
		ch <- prometheus.MustNewConstMetric(descResize, prometheus.CounterValue, float64(st.ResizeFailed))
		for _, c := range countsOf(st) {
			for outcome, n := range c.Requests {
				ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(n), c.Protocol, outcome)
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(descUpdates, prometheus.CounterValue, float64(updates))
}

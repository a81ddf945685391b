package status

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/relay"
	"github.com/queryd/queryd/responder"
)

// The metrics the sampler reads, named by the packages that own them
// (docs/metrics.md describes each).
const (
	metricRequests      = responder.MetricRequests
	metricBytesIn       = responder.MetricReceivedBytes
	metricBytesOut      = responder.MetricSentBytes
	metricRelaySessions = relay.MetricSessions
	metricRelayOpened   = relay.MetricSessionsOpened
	metricRelayEvicted  = relay.MetricSessionsEvicted
	metricRelayPackets  = relay.MetricPackets
	metricHeartbeats    = quake3.MetricHeartbeats
	metricHeartbeatErrs = quake3.MetricHeartbeatErrors
	metricMasterGetinfo = quake3.MetricMasterGetinfo
)

// Metrics are the names of the metrics the sampler reads: a daemon may
// give it a Gatherer of only the collectors that export them.
var Metrics = []string{metricRequests, metricBytesIn, metricBytesOut, metricRelaySessions, metricRelayOpened,
	metricRelayEvicted, metricRelayPackets, metricHeartbeats, metricHeartbeatErrs, metricMasterGetinfo}

// Outcomes are the per-protocol outcome series of the traffic card: every
// outcome of queryd_requests_total, as the responder names them (its one
// list, so that an outcome it adds, such as "denied", shows on the page).
var Outcomes = responder.SourceOutcomes[:]

// byteSeries are the traffic series that count bytes.
var byteSeries = []string{"bytes_in", "bytes_out"}

// RelaySeries are the relay card's per-second series.
var RelaySeries = []string{"opened", "evicted", "upstream", "downstream"}

// counters are the values of the sampled metrics at one moment.
type counters struct {
	traffic map[string]map[string]float64 // protocol → series (Outcomes, byteSeries) → total
	order   []string                      // protocols in the registry's order

	relayOn bool
	relay   map[string]float64 // RelaySeries → total
	// sessions is the relay sessions open (a gauge).
	sessions float64

	heartbeatsOn                 bool
	heartbeats, flatlines, hbErr float64
	getinfo                      float64
}

// readCounters gathers g and picks the sampled metrics out; with an error
// (a collector that failed) it still returns what was gathered.
func readCounters(g prometheus.Gatherer) (*counters, error) {
	mfs, err := g.Gather()
	if err != nil {
		err = fmt.Errorf("gather metrics: %w", err)
	}
	c := &counters{traffic: map[string]map[string]float64{}, relay: map[string]float64{}}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var l labels
			for _, lp := range m.GetLabel() {
				l.set(lp.GetName(), lp.GetValue())
			}
			// A counter's or a gauge's value (the other's getter gives 0).
			c.add(mf.GetName(), l, m.GetCounter().GetValue()+m.GetGauge().GetValue())
		}
	}
	return c, err
}

// labels are the labels of a sampled series.
type labels struct{ protocol, outcome, direction, kind string }

func (l *labels) set(name, value string) {
	switch name {
	case "protocol":
		l.protocol = value
	case "outcome":
		l.outcome = value
	case "direction":
		l.direction = value
	case "kind":
		l.kind = value
	}
}

// add takes one series' value v if the sampler reads metric name.
func (c *counters) add(name string, l labels, v float64) {
	switch name {
	case metricRequests:
		c.proto(l.protocol)[l.outcome] += v
	case metricBytesIn:
		c.proto(l.protocol)["bytes_in"] += v
	case metricBytesOut:
		c.proto(l.protocol)["bytes_out"] += v
	case metricRelaySessions:
		c.relayOn, c.sessions = true, v
	case metricRelayOpened:
		c.relay["opened"] += v
	case metricRelayEvicted:
		c.relay["evicted"] += v
	case metricRelayPackets:
		c.relay[l.direction] += v
	case metricHeartbeats:
		c.heartbeatsOn = true
		if l.kind == "flatline" {
			c.flatlines += v
		} else {
			c.heartbeats += v
		}
	case metricHeartbeatErrs:
		c.heartbeatsOn, c.hbErr = true, v
	case metricMasterGetinfo:
		c.heartbeatsOn, c.getinfo = true, v
	}
}

// proto returns the series of protocol p, adding it on first sight.
func (c *counters) proto(p string) map[string]float64 {
	s, ok := c.traffic[p]
	if !ok {
		s = map[string]float64{}
		c.traffic[p] = s
		c.order = append(c.order, p)
	}
	return s
}

package status

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/module"
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
)

// Metrics are the names of the metrics the sampler reads, with those of
// the master heartbeats hb (a module's, Source.Heartbeats): a daemon may
// give it a Gatherer of only the collectors that export them.
func Metrics(hb module.HeartbeatMetrics) []string {
	names := []string{metricRequests, metricBytesIn, metricBytesOut, metricRelaySessions, metricRelayOpened,
		metricRelayEvicted, metricRelayPackets}
	for _, n := range []string{hb.Sent, hb.Errors, hb.Getinfo} {
		if n != "" {
			names = append(names, n)
		}
	}
	return names
}

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

// readCounters gathers g and picks the sampled metrics out, hb's among
// them; with an error (a collector that failed) it still returns what was
// gathered.
func readCounters(g prometheus.Gatherer, hb module.HeartbeatMetrics) (*counters, error) {
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
			c.add(mf.GetName(), l, m.GetCounter().GetValue()+m.GetGauge().GetValue(), hb)
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

// add takes one series' value v if the sampler reads metric name (hb: the
// heartbeats' names).
func (c *counters) add(name string, l labels, v float64, hb module.HeartbeatMetrics) {
	if name != "" && (name == hb.Sent || name == hb.Errors || name == hb.Getinfo) {
		c.addHeartbeats(name, l, v, hb)
		return
	}
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
	}
}

// addHeartbeats takes one series of the master heartbeats' metrics hb.
func (c *counters) addHeartbeats(name string, l labels, v float64, hb module.HeartbeatMetrics) {
	c.heartbeatsOn = true
	switch name {
	case hb.Sent:
		if l.kind == "flatline" {
			c.flatlines += v
		} else {
			c.heartbeats += v
		}
	case hb.Errors:
		c.hbErr = v
	case hb.Getinfo:
		c.getinfo = v
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

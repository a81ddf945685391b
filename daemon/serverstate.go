package daemon

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// stateDesc is queryd_server_state: one series per server and state, 1 for
// the server's state and 0 for the others, so that an alert can fire on
// any server that stops answering (docs/alerts.yml), down ones included.
var stateDesc = prometheus.NewDesc("queryd_server_state",
	"1 for what the server answers now, 0 for the other states: answering (the game's state), not_fed ([server]: no source has sent state yet), asleep ([sleep]: its game server stopped on purpose; its last state with no players), silent (nothing; reason: feed, upstream, upstream_unanswered, agones_starting, agones_stopped, agones) or down (it does not run; reason: refused, start, failed). Every server of the host, running or not.",
	[]string{"server", "state", "reason"}, nil)

// stateCollector exports queryd_server_state for every server of the
// host, read from each server's one silence value when scraped.
type stateCollector struct{ d *Daemon }

// Describe implements prometheus.Collector.
func (c stateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- stateDesc }

// Collect implements prometheus.Collector.
func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	for _, s := range c.d.running() {
		sl := s.silence.at(now)
		collectState(ch, s.name, sl.State, string(sl.Reason))
	}
	for _, ds := range c.d.downServers() {
		collectState(ch, ds.name, StateDown, ds.why)
	}
}

// collectState sends server's series: 1 for cur (with its reason), 0 for
// every other state (reason "").
func collectState(ch chan<- prometheus.Metric, server string, cur State, reason string) {
	for _, st := range States {
		v, r := 0.0, ""
		if st == cur {
			v, r = 1, reason
		}
		ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, server, string(st), r)
	}
}

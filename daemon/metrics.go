package daemon

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// trackedRegisterer registers into the host's registry through a wrapper
// that adds server="NAME" to every series, and remembers what it
// registered so that a server's series go away with the server (SIGHUP
// removing its file) and a server started again under the same name can
// register them anew.
type trackedRegisterer struct {
	inner prometheus.Registerer
	mu    sync.Mutex
	cs    []prometheus.Collector
}

func newTrackedRegisterer(inner prometheus.Registerer) *trackedRegisterer {
	return &trackedRegisterer{inner: inner}
}

// Register registers c and remembers it.
func (r *trackedRegisterer) Register(c prometheus.Collector) error {
	if err := r.inner.Register(c); err != nil {
		return err
	}
	r.mu.Lock()
	r.cs = append(r.cs, c)
	r.mu.Unlock()
	return nil
}

// MustRegister registers cs, panicking on the first error (as a
// prometheus.Registry does).
func (r *trackedRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// Unregister unregisters c.
func (r *trackedRegisterer) Unregister(c prometheus.Collector) bool {
	r.mu.Lock()
	for i, x := range r.cs {
		if x == c {
			r.cs = append(r.cs[:i], r.cs[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	return r.inner.Unregister(c)
}

// unregisterAll unregisters everything registered through r.
func (r *trackedRegisterer) unregisterAll() {
	r.mu.Lock()
	cs := r.cs
	r.cs = nil
	r.mu.Unlock()
	for _, c := range cs {
		r.inner.Unregister(c)
	}
}

// tickGatherer is one server's families of the host registry's last
// gather: the host gathers once per status tick for every server, and
// each server's sampler reads its own share (the series labelled with its
// name).
type tickGatherer struct {
	mfs []*dto.MetricFamily
	err error
}

// Gather returns the families set by the last split.
func (g *tickGatherer) Gather() ([]*dto.MetricFamily, error) { return g.mfs, g.err }

// splitByServer groups the gathered families by their series' server
// label (series without one, the host's own, are left out).
func splitByServer(mfs []*dto.MetricFamily) map[string][]*dto.MetricFamily {
	out := map[string][]*dto.MetricFamily{}
	for _, mf := range mfs {
		var last string
		var cur *dto.MetricFamily
		for _, m := range mf.GetMetric() {
			name, ok := serverLabel(m)
			if !ok {
				continue
			}
			if cur == nil || name != last {
				cur = familyOf(out, name, mf)
				last = name
			}
			cur.Metric = append(cur.Metric, m)
		}
	}
	return out
}

// familyOf returns server name's copy of mf (made empty on first use).
func familyOf(out map[string][]*dto.MetricFamily, name string, mf *dto.MetricFamily) *dto.MetricFamily {
	fams := out[name]
	if n := len(fams); n > 0 && fams[n-1].GetName() == mf.GetName() {
		return fams[n-1]
	}
	f := &dto.MetricFamily{Name: mf.Name, Help: mf.Help, Type: mf.Type}
	out[name] = append(fams, f)
	return f
}

// serverLabel is the value of m's server label.
func serverLabel(m *dto.Metric) (string, bool) {
	for _, l := range m.GetLabel() {
		if l.GetName() == "server" {
			return l.GetValue(), true
		}
	}
	return "", false
}

var (
	_ prometheus.Registerer = (*trackedRegisterer)(nil)
	_ prometheus.Gatherer   = (*tickGatherer)(nil)
)

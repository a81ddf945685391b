package daemon

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// trackedRegisterer registers into the host's registry through a wrapper
// that adds server="NAME" to every series, and remembers what it
// registered so that a server's series go away with the server (SIGHUP
// removing its file) and a server started again under the same name can
// register them anew.
//
// A collector that exports a metric the status page samples (names:
// status.Metrics of the modules' heartbeats) is also registered,
// unwrapped, in sampled: the server's sampler gathers only those once a
// second, not the host's whole registry (whose wrapped series cost a
// descriptor each per gather).
type trackedRegisterer struct {
	inner   prometheus.Registerer
	names   []string // the sampled metrics
	sampled *prometheus.Registry
	mu      sync.Mutex
	cs      []prometheus.Collector
}

func newTrackedRegisterer(inner prometheus.Registerer, sampled []string) *trackedRegisterer {
	return &trackedRegisterer{inner: inner, names: sampled, sampled: prometheus.NewRegistry()}
}

// Register registers c and remembers it.
func (r *trackedRegisterer) Register(c prometheus.Collector) error {
	if err := r.inner.Register(c); err != nil {
		return err
	}
	if exportsSampled(c, r.names) {
		r.sampled.Register(c) // the same descriptors: accepted where inner accepted them
	}
	r.mu.Lock()
	r.cs = append(r.cs, c)
	r.mu.Unlock()
	return nil
}

// exportsSampled reports whether c describes a metric named in names.
func exportsSampled(c prometheus.Collector, names []string) bool {
	ch := make(chan *prometheus.Desc, 16)
	go func() { c.Describe(ch); close(ch) }()
	found := false
	for d := range ch {
		s := d.String() // Desc{fqName: "NAME", ...}
		for _, m := range names {
			if strings.Contains(s, `fqName: "`+m+`"`) {
				found = true
			}
		}
	}
	return found
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
	r.sampled.Unregister(c)
	return r.inner.Unregister(c)
}

// unregisterAll unregisters everything registered through r.
func (r *trackedRegisterer) unregisterAll() {
	r.mu.Lock()
	cs := r.cs
	r.cs = nil
	r.mu.Unlock()
	for _, c := range cs {
		r.sampled.Unregister(c)
		r.inner.Unregister(c)
	}
}

var _ prometheus.Registerer = (*trackedRegisterer)(nil)

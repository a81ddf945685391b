package daemon

import (
	"io"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/steer"
)

// newSteer gives proven sources sockets of their own when [listen]
// steer_proven is on and the kernel lets queryd (package steer), and says
// once in the log which the operator got. It returns nil when off.
func (s *Server) newSteer(c *config.Config) *steer.Steer {
	log := s.log.With("part", "udp")
	switch {
	case !c.Listen.SteerProven:
		log.Info("proven sources share the sockets with every other source: [listen] steer_proven = false")
		return nil
	case c.Limits.ProvenFor <= 0:
		log.Info("proven sources share the sockets with every other source: [limits] proven_for = 0 remembers no proven source")
		return nil
	case c.Listen.Socket == responder.SocketPortable:
		log.Info("proven sources share the sockets with every other source: steering needs the batch or uring socket layer")
		return nil
	}
	provenFor := time.Duration(c.Limits.ProvenFor)
	st, err := steer.New(c.Limits.TrackedIPs, provenFor)
	if err != nil {
		log.Warn("proven sources share the sockets with every other source, so a flood that fills them delays and drops their queries too: "+
			"giving them sockets of their own needs Linux and CAP_BPF (or root)", "err", err)
		return nil
	}
	log.Info("proven sources get sockets of their own: a flood that fills the other sockets' queues does not reach theirs",
		"proven_for", provenFor.String(), "tracked_ips", c.Limits.TrackedIPs)
	return st
}

// steered is the reuseport groups a Steer attached, read by the metrics.
type steered struct {
	st     *steer.Steer
	mu     sync.Mutex
	groups []*steer.Group
}

// attach is st's Attach as the responder takes it.
func (sd *steered) attach(proven, ordinary []int) (io.Closer, error) {
	g, err := sd.st.Attach(proven, ordinary)
	if err != nil {
		return nil, err
	}
	sd.mu.Lock()
	sd.groups = append(sd.groups, g)
	sd.mu.Unlock()
	return closerFunc(func() error { return sd.drop(g) }), nil
}

// drop forgets g and closes it (with its address's sockets), so that no
// scrape reads a closed group.
func (sd *steered) drop(g *steer.Group) error {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	sd.groups = slices.DeleteFunc(sd.groups, func(x *steer.Group) bool { return x == g })
	return g.Close()
}

// closerFunc is a func as an io.Closer.
type closerFunc func() error

// Close calls f.
func (f closerFunc) Close() error { return f() }

// counts sums the groups' counts.
func (sd *steered) counts() steer.Counts {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	var sum steer.Counts
	for _, g := range sd.groups {
		c, err := g.Counts()
		if err != nil {
			continue
		}
		sum.Proven += c.Proven
		sum.Ordinary += c.Ordinary
	}
	return sum
}

// register exports queryd_steered_total{to}.
func (sd *steered) register(reg prometheus.Registerer) {
	for to, n := range map[string]func(steer.Counts) uint64{
		"proven":   func(c steer.Counts) uint64 { return c.Proven },
		"ordinary": func(c steer.Counts) uint64 { return c.Ordinary },
	} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "queryd_steered_total",
			Help:        "Datagrams the kernel put on the proven sources' sockets (to=proven) or the others (to=ordinary), with [listen] steer_proven.",
			ConstLabels: prometheus.Labels{"to": to},
		}, func() float64 { return float64(n(sd.counts())) }))
	}
}

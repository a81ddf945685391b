package daemon

import (
	"io"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/steer"
)

// provenFor is how long a source stays proven after queryd last answered a
// valid token from it. TODO(merge): [limits] proven_for (branch tier).
const provenFor = 10 * time.Minute

// newSteer gives proven sources sockets of their own when [listen]
// steer_proven is on and the kernel lets queryd (package steer), and says
// once in the log which the operator got. It returns nil when off.
func (s *Server) newSteer(c *config.Config) *steer.Steer {
	log := s.log.With("part", "udp")
	switch {
	case !c.Listen.SteerProven:
		log.Info("proven sources share the sockets with every other source: [listen] steer_proven = false")
		return nil
	case c.Listen.Socket == responder.SocketPortable:
		log.Info("proven sources share the sockets with every other source: steering needs the batch or uring socket layer")
		return nil
	}
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

// steerFunc is st's Attach as the responder takes it.
func steerFunc(st *steer.Steer) responder.SteerFunc {
	return func(proven, ordinary []int) (io.Closer, error) {
		g, err := st.Attach(proven, ordinary)
		if err != nil {
			return nil, err
		}
		return g, nil
	}
}

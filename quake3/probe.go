package quake3

import (
	"context"
	"time"
)

// How the heartbeat service probes the game server when relay mode is on
// and queryd does not answer Quake 3 itself (etrelay's probe): getinfo from
// a socket of its own, up to ProbeAttempts times, each waiting ProbeTimeout
// for the infoResponse, before every heartbeat and every ProbeEvery between
// them. A game server that answers none is down.
const (
	ProbeAttempts = 3                // one lost datagram must not flatline the server
	ProbeTimeout  = 3 * time.Second  // per attempt
	ProbeEvery    = 30 * time.Second // between heartbeats: how soon a server going down or back is seen
)

// probeTiming is the probe's attempts and times (tests shorten them:
// export_test.go).
type probeTiming struct {
	attempts       int
	timeout, every time.Duration
}

var defaultProbe = probeTiming{attempts: ProbeAttempts, timeout: ProbeTimeout, every: ProbeEvery}

// probing reports whether the service learns from the game server, not the
// feed, whether the server is up: relay mode is on and the Quake 3 handler
// is off, so the masters' getinfo go to the game server (a reload may turn
// the handler on or off).
func (h *heartbeats) probing() bool {
	return h.env.RelayGameServer.IsValid() && h.current() == nil
}

// alive reports whether the server is up for the masters. While probing:
// whether the game server answered getinfo, probed anew when fresh is set
// or the last probe is older than the probe's every; else: whether the feed
// is live.
func (h *heartbeats) alive(ctx context.Context, fresh bool) bool {
	if !h.probing() {
		return !h.env.Silent(time.Now())
	}
	if fresh || h.probedAt.IsZero() || time.Since(h.probedAt) >= h.probe.every {
		h.upstreamUp = h.probeUpstream(ctx, h.upstreamUp)
		h.probedAt = time.Now()
	}
	return h.upstreamUp
}

// probeUpstream asks the game server getinfo (with a random challenge) from
// an ephemeral socket of its own, up to the probe's attempts, and reports
// whether an infoResponse echoing the challenge came. When no socket can be
// had, or ctx ends first, it says nothing new: it returns last.
func (h *heartbeats) probeUpstream(ctx context.Context, last bool) bool {
	c, err := Dial(h.env.RelayGameServer.String())
	if err != nil {
		h.log.Warn("cannot probe the game server; keeping its last state", "upstream", h.env.RelayGameServer, "err", err)
		return last
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	c.Timeout = h.probe.timeout
	for i := 0; i < h.probe.attempts; i++ {
		start := time.Now()
		_, err := c.Info()
		if ctx.Err() != nil {
			return last
		}
		if err == nil {
			h.probes.WithLabelValues("answered").Inc()
			h.log.Debug("game server answered the probe", "upstream", h.env.RelayGameServer, "attempt", i+1, "rtt", time.Since(start))
			return true
		}
		h.log.Debug("game server probe unanswered", "upstream", h.env.RelayGameServer, "attempt", i+1, "err", err)
		if i == h.probe.attempts-1 {
			break
		}
		// An ICMP "port unreachable" ends an attempt at once: wait out its
		// time, so that a restarting game server gets the probe's whole span.
		select {
		case <-time.After(h.probe.timeout - time.Since(start)):
		case <-ctx.Done():
			return last
		}
	}
	h.probes.WithLabelValues("silent").Inc()
	return false
}

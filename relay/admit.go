package relay

import (
	"net/netip"
	"time"
)

// relaySourceKey is a source of sessions: an IPv4 address, or an IPv6
// address with its last 64 bits cleared (a /64, what one host or one
// customer usually holds).
type relaySourceKey [16]byte

func relaySourceOf(ip netip.Addr) relaySourceKey {
	ip = ip.Unmap()
	k := relaySourceKey(ip.As16())
	if ip.Is6() {
		clear(k[8:])
	}
	return k
}

// relaySource is one source's sessions and its opening budget (a token
// bucket of OpenBurst tokens refilled at OpenRate). It exists while the
// source has a session, so there are never more than MaxSessions.
type relaySource struct {
	sessions []*relaySession // at most MaxPerIP
	tokens   float64
	at       int64 // relay clock of the last refill
}

// take takes one token from e's opening budget, reporting whether there was one.
func (e *relaySource) take(now int64, perSec float64, burst int) bool {
	if perSec < 0 {
		return true
	}
	e.tokens = min(float64(burst), e.tokens+float64(now-e.at)/1e9*perSec)
	e.at = now
	if e.tokens < 1 {
		return false
	}
	e.tokens--
	return true
}

// idlest returns the source's session quiet the longest.
func (e *relaySource) idlest() *relaySession {
	var idlest *relaySession
	for _, s := range e.sessions {
		if idlest == nil || s.last.Load() < idlest.last.Load() {
			idlest = s
		}
	}
	return idlest
}

func (e *relaySource) remove(s *relaySession) {
	for i, o := range e.sessions {
		if o == s {
			last := len(e.sessions) - 1
			e.sessions[i] = e.sessions[last]
			e.sessions[last] = nil
			e.sessions = e.sessions[:last]
			return
		}
	}
}

// evictSample is how many sessions sampleIdlest compares.
const evictSample = 16

// evictMinIdle is how long a session must have been quiet to be evicted: a
// playing client sends many datagrams a second and is never taken.
const evictMinIdle = 500 * time.Millisecond

// admit decides whether src may open a session now and makes room for it;
// r.mu is held. It returns the source's entry (made or kept in the map) or
// the reason to drop the datagram:
//
//   - per_ip_full: the source holds MaxPerIP sessions, none quiet for
//     evictMinIdle (else its idlest is evicted: a source churning through
//     ports only ever replaces its own sessions);
//   - sessions_full: MaxSessions are open and the idlest of a random sample
//     has not been quiet for evictMinIdle (else it is evicted, so spoofed
//     one-datagram sources cannot lock real players out);
//   - open_rate: the source has opened its burst and more than OpenRate a
//     second since.
//
// Nothing is evicted and no token is taken unless the session opens.
func (r *Relay) admit(src netip.AddrPort, now int64) (*relaySource, int) {
	key := relaySourceOf(src.Addr())
	e := r.sources[key]
	var victim *relaySession
	switch {
	case e != nil && len(e.sessions) >= r.cfg.MaxPerIP:
		if victim = e.idlest(); !r.quiet(victim, now) {
			return nil, dropPerIPFull
		}
	case len(r.bySrc) >= r.cfg.MaxSessions:
		if victim = r.sampleIdlest(); victim == nil || !r.quiet(victim, now) {
			return nil, dropSessionsFull
		}
	}
	if e == nil {
		e = &relaySource{tokens: float64(r.cfg.OpenBurst), at: now}
	}
	if !e.take(now, r.cfg.OpenRate, r.cfg.OpenBurst) {
		return nil, dropOpenRate
	}
	if victim != nil {
		r.end(victim)
		r.m.evicted.Inc()
		if r.dbg.on {
			r.dbg.line("relay: session evicted", "client", victim.client, "port", victim.port, "active", len(r.bySrc))
		}
	}
	r.sources[key] = e // again, if the victim was its last session
	return e, -1
}

// quiet reports whether s has been quiet for evictMinIdle.
func (r *Relay) quiet(s *relaySession, now int64) bool {
	return now-s.last.Load() >= int64(evictMinIdle)
}

// sampleIdlest returns the idlest of a random sample of evictSample
// sessions (map order is random); r.mu is held.
func (r *Relay) sampleIdlest() *relaySession {
	var idlest *relaySession
	n := 0
	for _, s := range r.bySrc {
		if idlest == nil || s.last.Load() < idlest.last.Load() {
			idlest = s
		}
		if n++; n == evictSample {
			break
		}
	}
	return idlest
}

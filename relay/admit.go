package relay

import (
	"net/netip"
	"time"
)

// sourceKey is a source of sessions: an IPv4 address, or an IPv6 address
// with its last 64 bits cleared (a /64, what one host or one customer
// usually holds).
type sourceKey [16]byte

func sourceOf(ip netip.Addr) sourceKey {
	ip = ip.Unmap()
	k := sourceKey(ip.As16())
	if ip.Is6() {
		clear(k[8:])
	}
	return k
}

// source is one source's sessions and its opening budget (a token bucket
// of OpenBurst tokens refilled at OpenRate). It exists while the source has
// a session, so there are never more than MaxSessions.
type source struct {
	sessions []*session // at most MaxPerIP
	tokens   float64
	at       int64 // relay clock of the last refill
}

// take takes one token from e's opening budget, reporting whether there
// was one; a rate of 0 is no limit.
func (e *source) take(now int64, perSec float64, burst int) bool {
	if perSec == 0 {
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

func (e *source) remove(s *session) {
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

// evictSample is how many sessions a random sample compares.
const evictSample = 16

// freshHold is how long a fresh session is kept from newcomers of other
// sources: a handshake's time (ioquake3's is two round trips before the
// game server's first game datagram). Under a flood, sessions then open at
// most (MaxSessions less the reserve) / freshHold a second (3,072 at the
// defaults, about 25 % of a core: a session's socket costs about 80 µs to
// open and close), not as fast as datagrams come, and each gets freshHold
// to finish its handshake; a newcomer that finds every fresh session
// younger is dropped at the cost of a map lookup.
const freshHold = time.Second

// evictMinIdle is how long a fresh session must have been quiet before a
// newcomer of its own source or site may take its place: a client in its
// handshake sends several datagrams a second and is not taken.
const evictMinIdle = 500 * time.Millisecond

// admit decides whether src may open a session now and makes room for it;
// r.mu is held. It returns the source's entry (made or kept in the map) or
// the reason to drop the datagram:
//
//   - per_ip_full: the source holds MaxPerIP sessions and none of them is
//     evictable by a newcomer of its own (else its idlest such is evicted:
//     a source churning through ports only ever replaces its own sessions);
//   - site_full: the source's /24, /56 or /48 holds its share of
//     MaxSessions and a sample of its sessions has none evictable (else the
//     idlest such makes room);
//   - sessions_full: MaxSessions are open, or the sessions not yet proven
//     hold all but the proven reserve, and there is no fresh session older
//     than freshHold nor a sampled playing one quiet past LoadingGrace to
//     evict (else the oldest fresh one, or that one, makes room);
//   - open_rate: the source has opened its burst and more than OpenRate a
//     second since.
//
// Evictable by a newcomer of the same source or site: a fresh session
// quiet for evictMinIdle, or any session quiet past LoadingGrace. Nothing
// is evicted and no token is taken unless the session opens.
func (r *Relay) admit(src netip.AddrPort, now int64) (*source, int) {
	key := sourceOf(src.Addr())
	e := r.sources[key]
	var own *session
	if e != nil && len(e.sessions) >= r.cfg.MaxPerIP {
		if own = r.idlestEvictable(e.sessions, len(e.sessions), now); own == nil {
			return nil, dropPerIPFull
		}
	}
	if own == nil {
		var ok bool
		if own, ok = r.siteRoom(src.Addr(), now); !ok {
			return nil, dropSiteFull
		}
	}
	room, ok := r.globalRoom(own, now)
	if !ok {
		return nil, dropSessionsFull
	}
	if e == nil {
		e = &source{tokens: float64(r.cfg.OpenBurst), at: now}
	}
	if !e.take(now, r.cfg.OpenRate, r.cfg.OpenBurst) {
		return nil, dropOpenRate
	}
	for _, v := range [2]*session{own, room} {
		if v != nil {
			r.evict(v)
		}
	}
	r.sources[key] = e // again, if the victim was its last session
	return e, -1
}

// globalRoom returns the session to evict so that one more fits (nil when
// it fits already, or once own is gone), and false when none may go.
func (r *Relay) globalRoom(own *session, now int64) (*session, bool) {
	total, unproven := len(r.bySrc), len(r.bySrc)-r.proven
	if own != nil {
		total--
		if own.state.Load() != stateProven {
			unproven--
		}
	}
	needUnproven := unproven >= r.unprovenCap()
	if total < r.cfg.MaxSessions && !needUnproven {
		return nil, true
	}
	if v := r.fresh.oldest(own); v != nil && now-v.born >= int64(r.freshHold) {
		return v, true
	}
	v := r.sampleQuiet(own, needUnproven, now)
	return v, v != nil
}

// unprovenCap is how many sessions may be open that are not proven:
// MaxSessions less the reserve, at least one.
func (r *Relay) unprovenCap() int {
	return max(1, r.cfg.MaxSessions-int(r.cfg.Reserve*float64(r.cfg.MaxSessions)))
}

// evict ends v to make room for a newcomer; r.mu is held.
func (r *Relay) evict(v *session) {
	r.end(v)
	r.m.evicted.Inc()
	if r.dbg.on {
		r.dbg.line("relay: session evicted", "client", v.client, "local", v.addr, "active", len(r.bySrc))
	}
}

// evictable reports whether a newcomer of s's own source or site may take
// its place: fresh and quiet for evictMinIdle, or quiet past LoadingGrace.
func (r *Relay) evictable(s *session, now int64) bool {
	quiet := now - s.last.Load()
	if s.state.Load() == stateFresh {
		return quiet >= int64(evictMinIdle)
	}
	return quiet > int64(r.cfg.LoadingGrace)
}

// idlestEvictable returns the idlest evictable session of the first n of
// list (nil when there is none).
func (r *Relay) idlestEvictable(list []*session, n int, now int64) *session {
	var idlest *session
	for _, s := range list[:n] {
		if r.evictable(s, now) && (idlest == nil || s.last.Load() < idlest.last.Load()) {
			idlest = s
		}
	}
	return idlest
}

// sampleQuiet returns the idlest of a random sample of evictSample live or
// proven sessions (map order is random) if it has been quiet past LoadingGrace
// (and is not proven, when unproven is set); r.mu is held.
func (r *Relay) sampleQuiet(not *session, unproven bool, now int64) *session {
	var idlest *session
	n, visited := 0, 0
	for _, s := range r.bySrc {
		if visited++; visited > 4*evictSample { // mostly fresh ones: stop, the drop stays cheap
			break
		}
		st := s.state.Load()
		if s == not || st == stateFresh || unproven && st == stateProven {
			continue
		}
		if idlest == nil || s.last.Load() < idlest.last.Load() {
			idlest = s
		}
		if n++; n == evictSample {
			break
		}
	}
	if idlest == nil || now-idlest.last.Load() <= int64(r.cfg.LoadingGrace) {
		return nil
	}
	return idlest
}

// freshList links the fresh sessions (no game datagram from the game server
// yet) in the order they opened; r.mu guards it.
type freshList struct{ head, tail *session }

func (l *freshList) push(s *session) {
	s.prev, s.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = s
	} else {
		l.head = s
	}
	l.tail = s
}

func (l *freshList) remove(s *session) {
	if s.prev != nil {
		s.prev.next = s.next
	} else if l.head == s {
		l.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else if l.tail == s {
		l.tail = s.prev
	}
	s.prev, s.next = nil, nil
}

// oldest returns the fresh session that opened first, other than not.
func (l *freshList) oldest(not *session) *session {
	s := l.head
	if s == not && s != nil {
		s = s.next
	}
	return s
}

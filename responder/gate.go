package responder

import (
	"net/netip"
	"time"

	"github.com/queryd/queryd/dgram"
)

// The proven-source tier (issue 43): a source is proven once queryd has
// answered a valid challenge token from it, and stays so for
// Limits.ProvenFor. The requests that do not answer a valid token (a
// challenge asked, a query without a token, an open answer, Quake 3 and
// Bedrock whose protocols have no token) draw on the unproven packet gate
// (Limits.UnprovenPacketRate, one share per receive loop). While a loop's
// share is spent, a request from a source that is not proven, and that
// carries no valid token (dgram.TokenChecker, for the handlers that can
// tell without answering), is shed before the packet rate, the handler's
// Answer or a budget: counted "unproven_shed", nothing sent. So during a
// flood of spoofed sources the CPU goes to the proven ones, whose
// challenges and queries are answered as before.

// provenSet remembers until when each source is proven, for about tracked
// sources: a sourceBuckets table whose slot time is that deadline (a slot
// past it is free, and a new source takes the one that ends first).
type provenSet struct {
	b *sourceBuckets
}

// newProvenSet makes the set for about tracked sources.
func newProvenSet(tracked int) (*provenSet, error) {
	b, err := newSourceBuckets(1, 1, max(tracked, 16))
	if err != nil {
		return nil, err
	}
	return &provenSet{b: b}, nil
}

// at is now on the table's clock.
func (p *provenSet) at(now time.Time) int64 { return int64(now.Sub(p.b.start)) + epoch }

// proven reports whether source k is proven at now.
func (p *provenSet) proven(k ipKey, now time.Time) bool {
	t := p.at(now)
	id := k.id()
	h := p.b.hash(id)
	s := &p.b.shards[h&(shards-1)]
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, found := s.find(id, h)
	return found && slot.tat > t
}

// mark makes source k proven until now+d; it reports whether k was not
// proven before (a source new to the tier).
func (p *provenSet) mark(k ipKey, now time.Time, d time.Duration) bool {
	t := p.at(now)
	until := t + int64(d)
	id := k.id()
	h := p.b.hash(id)
	s := &p.b.shards[h&(shards-1)]
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, found := s.find(id, h)
	for !found && slot.tat > t && len(s.sets) < p.b.maxSets {
		s.grow(p.b, t)
		slot, found = s.find(id, h)
	}
	fresh := !found || slot.tat <= t
	if found && slot.tat > until {
		return false
	}
	*slot = bucketSlot{id: id, tat: until}
	return fresh
}

// gateOpen reports whether receive loop loop's share of the unproven
// packet gate has a request left at now (without taking it); with no
// gate, always.
func (l *limiter) gateOpen(loop int, now time.Time) bool {
	if l.gate == nil {
		return true
	}
	return l.gate[loop%len(l.gate)].TokensAt(now) >= 1
}

// gateDraw takes one request from loop's share of the gate (a request
// that did not answer a valid token was answered or challenged).
func (l *limiter) gateDraw(loop int, now time.Time) {
	if l.gate != nil {
		l.gate[loop%len(l.gate)].AllowN(now, 1)
	}
}

// shed reports whether the request req from src to handler h is shed by
// the tier: the loop's share of the gate is spent, src is not proven and
// req carries no valid token.
func (s *Server) shed(ss *session, h Handler, req []byte, src netip.AddrPort) bool {
	b := &ss.batch
	if b.lim.gateOpen(ss.id, b.now) {
		return false
	}
	if s.proven != nil && s.proven.proven(ss.key, b.now) {
		return false
	}
	if tc, ok := h.(dgram.TokenChecker); ok && tc.ValidToken(req, src) {
		return false
	}
	return true
}

// afterAnswer is the tier's part once h answered: an answer to a valid
// token proves the source (marked for Limits.ProvenFor, and OnProven told
// each time, so that a steering program's mark is renewed too), anything
// else sent draws on the gate.
func (s *Server) afterAnswer(ss *session, src netip.AddrPort, o dgram.Outcome, sent bool) {
	b := &ss.batch
	if o.Proven() {
		if d := b.lim.lim.ProvenFor; d > 0 && s.proven != nil {
			s.proven.mark(ss.key, b.now, d)
		}
		if s.cfg.OnProven != nil {
			s.cfg.OnProven(src.Addr())
		}
		return
	}
	if sent {
		b.lim.gateDraw(ss.id, b.now)
	}
}

// Proven reports whether ip is a proven source of this server now (the
// proven-source tier): queryd answered a valid token from it within
// Limits.ProvenFor.
func (s *Server) Proven(ip netip.Addr) bool {
	return s.proven != nil && s.proven.proven(keyOf(ip), time.Now())
}

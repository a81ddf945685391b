package relay

import (
	"net/netip"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/queryd/queryd/dgram"
)

// passSources is how many sources a pass limit tracks (about 100 B each:
// 400 KiB at most per limit). A source pushed out comes back with a full
// burst: the total still holds.
const passSources = 4096

// passLimits are the relay's limits on what it passes of the datagrams a
// stock game server answers from one bucket for every source
// (dgram.PassLimit: ioquake3's getchallenge, getinfo, getstatus), so that
// queryd's [upstream] poll always finds room in that bucket. One lock
// guards every bucket; only datagrams a limit matches take it.
type passLimits struct {
	mu     sync.Mutex
	limits []passLimit
}

// passLimit is one dgram.PassLimit with its buckets.
type passLimit struct {
	dgram.PassLimit
	total   bucket
	sources *lru.Cache[sourceKey, *bucket] // nil without a per-source limit
}

// bucket is a token bucket: tokens refilled at a rate up to a burst.
type bucket struct {
	tokens float64
	at     int64 // relay clock of the last refill
	used   bool  // false: new, full
}

// take takes one token, reporting whether there was one (a new bucket is
// full).
func (b *bucket) take(now int64, perSec float64, burst int) bool {
	if !b.used {
		b.tokens, b.used = float64(burst), true
	} else {
		b.tokens = min(float64(burst), b.tokens+float64(now-b.at)/1e9*perSec)
	}
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// maxPassLimits is how many limits a relay applies (one bit each of a
// mask): far more than modules that have one.
const maxPassLimits = 64

// newPassLimits makes the buckets of the limits that limit something.
func newPassLimits(list []dgram.PassLimit) *passLimits {
	p := &passLimits{}
	for _, l := range list {
		if !l.On() || len(p.limits) == maxPassLimits {
			continue
		}
		pl := passLimit{PassLimit: l}
		pl.Burst, pl.SourceBurst = max(pl.Burst, 1), max(pl.SourceBurst, 1)
		if l.SourceRate > 0 {
			pl.sources, _ = lru.New[sourceKey, *bucket](passSources) // errs only for a size below 1
		}
		p.limits = append(p.limits, pl)
	}
	return p
}

// passTicket is what take took, so that refund can give it back.
type passTicket struct {
	p     *passLimits
	src   sourceKey
	taken uint64 // limits whose tokens (source and total) were taken
}

// take reports whether req from ip may pass now (clock is the relay's),
// and takes the tokens if so: each limit it matches must have a token for
// ip's source (checked first, as ioquake3 checks its per-address bucket
// first) and one in total. When the total has none, the source's token
// stays taken, as in ioquake3: sources sending faster than their own rate
// (a flood from many addresses) soon offer the total no more than
// SourceRate each and leave room in it for others. A datagram that passes
// but then does not reach the game server (no session for it) gives its
// tokens back (refund).
func (p *passLimits) take(req []byte, ip netip.Addr, clock func() int64) (passTicket, bool) {
	if p == nil {
		return passTicket{}, true
	}
	var matched uint64 // outside the lock: most datagrams are game traffic no limit matches
	for i := range p.limits {
		if p.limits[i].Match(req) {
			matched |= 1 << i
		}
	}
	if matched == 0 {
		return passTicket{}, true
	}
	t := passTicket{p: p, src: sourceOf(ip)}
	now := clock()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.limits {
		if matched&(1<<i) == 0 {
			continue
		}
		if !p.limits[i].take(t.src, now, &t, i) {
			t.undo() // the limits before this one gave their tokens
			return passTicket{}, false
		}
	}
	return t, true
}

// take takes l's tokens for src (p.mu is held), recording them in t as
// limit i; it reports false when either bucket is empty (the source's
// token, if taken, stays taken).
func (l *passLimit) take(src sourceKey, now int64, t *passTicket, i int) bool {
	var b *bucket
	if l.sources != nil {
		var ok bool
		if b, ok = l.sources.Get(src); !ok {
			b = &bucket{}
			l.sources.Add(src, b)
		}
		if !b.take(now, l.SourceRate, l.SourceBurst) {
			return false
		}
	}
	if l.Rate > 0 && !l.total.take(now, l.Rate, l.Burst) {
		return false
	}
	t.taken |= 1 << i
	return true
}

// refund gives back what take took, for a datagram that did not reach the
// game server after all.
func (t passTicket) refund() {
	if t.taken == 0 {
		return
	}
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	t.undo()
}

// undo gives back t's tokens; p.mu is held.
func (t passTicket) undo() {
	for i := range t.p.limits {
		if t.taken&(1<<i) == 0 {
			continue
		}
		l := &t.p.limits[i]
		if l.Rate > 0 {
			l.total.tokens = min(float64(l.Burst), l.total.tokens+1)
		}
		if l.sources == nil {
			continue
		}
		if b, ok := l.sources.Peek(t.src); ok {
			b.tokens = min(float64(l.SourceBurst), b.tokens+1)
		}
	}
}

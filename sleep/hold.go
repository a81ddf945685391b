package sleep

import (
	"net/netip"

	"github.com/queryd/queryd/dgram"
)

// HoldLimits bound the game datagrams held while a game server wakes:
// per source (an IPv4 address or an IPv6 /64) and in total, in datagrams
// and in bytes. Past a bound the oldest go first: the source's own past a
// source's bound, everyone's past the total's.
type HoldLimits struct {
	PerSource, BytesPerSource int
	Total, Bytes              int
}

// Held is one datagram held: its bytes (a copy) and what the relay needs
// to pass it on as if it had just come.
type Held struct {
	B     []byte
	Src   netip.AddrPort
	Local netip.Addr   // the address it arrived on
	Back  dgram.Sender // the socket it arrived on, which the answers leave from

	key        sourceKey
	prev, next *Held // everyone's, oldest first
	snext      *Held // the source's, oldest first
}

// heldOverhead bounds what a held datagram costs besides its bytes (the
// Held, its source's entry and its share of the source map: about 250
// bytes measured); the memory bound SECURITY.md gives is Bytes + Total ×
// heldOverhead (TestHoldMemory measures it). A datagram's bytes are
// counted as the heap holds them: the copy's capacity (its size class).
const heldOverhead = 320

// sourceKey is a source: an IPv4 address, or an IPv6 /64.
type sourceKey [16]byte

func sourceOf(a netip.Addr) sourceKey {
	a = a.Unmap()
	k := sourceKey(a.As16())
	if a.Is6() {
		clear(k[8:])
	}
	return k
}

// sourceHold is one source's datagrams held.
type sourceHold struct {
	n, bytes   int
	head, tail *Held
}

// hold is the datagrams held while the game server wakes, bounded by its
// limits. It is not safe for concurrent use (the Sleeper locks it).
type hold struct {
	lim        HoldLimits
	n, bytes   int
	head, tail *Held
	bySrc      map[sourceKey]*sourceHold
}

func newHold(lim HoldLimits) *hold { return &hold{lim: lim, bySrc: map[sourceKey]*sourceHold{}} }

// add holds a copy of b and reports how many datagrams it dropped to stay
// within the bounds (b itself, when larger than a source may hold).
func (h *hold) add(b []byte, src netip.AddrPort, local netip.Addr, back dgram.Sender) (dropped int) {
	if len(b) > h.lim.BytesPerSource || len(b) > h.lim.Bytes {
		return 1
	}
	c := append([]byte(nil), b...) // its capacity is what it holds of the heap
	size := cap(c)
	if size > h.lim.BytesPerSource || size > h.lim.Bytes { // its size class passes a bound
		return 1
	}
	key := sourceOf(src.Addr())
	s := h.bySrc[key]
	if s == nil {
		s = &sourceHold{}
		h.bySrc[key] = s
	}
	for s.n > 0 && (s.n+1 > h.lim.PerSource || s.bytes+size > h.lim.BytesPerSource) {
		h.remove(s.head)
		dropped++
	}
	for h.n > 0 && (h.n+1 > h.lim.Total || h.bytes+size > h.lim.Bytes) {
		h.remove(h.head)
		dropped++
	}
	if h.bySrc[key] == nil { // its last datagram just went
		h.bySrc[key] = s
	}
	d := &Held{B: c, Src: src, Local: local, Back: back, key: key, prev: h.tail}
	if h.tail != nil {
		h.tail.next = d
	} else {
		h.head = d
	}
	h.tail = d
	if s.tail != nil {
		s.tail.snext = d
	} else {
		s.head = d
	}
	s.tail = d
	s.n++
	s.bytes += size
	h.n++
	h.bytes += size
	return dropped
}

// remove drops d, the oldest of its source (everyone's oldest is its
// source's oldest too).
func (h *hold) remove(d *Held) {
	s := h.bySrc[d.key]
	s.head = d.snext
	if s.head == nil {
		s.tail = nil
		delete(h.bySrc, d.key)
	}
	s.n--
	s.bytes -= cap(d.B)
	if d.prev != nil {
		d.prev.next = d.next
	} else {
		h.head = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	} else {
		h.tail = d.prev
	}
	h.n--
	h.bytes -= cap(d.B)
	d.prev, d.next, d.snext = nil, nil, nil
}

// take returns every datagram held, in the order they came, and empties
// the hold.
func (h *hold) take() []*Held {
	out := make([]*Held, 0, h.n)
	for d := h.head; d != nil; d = d.next {
		out = append(out, d)
	}
	h.clear()
	return out
}

// clear drops everything and returns how many datagrams that was.
func (h *hold) clear() int {
	n := h.n
	h.head, h.tail, h.n, h.bytes = nil, nil, 0, 0
	clear(h.bySrc)
	return n
}

// size is what the hold holds: datagrams and bytes.
func (h *hold) size() (n, bytes int) { return h.n, h.bytes }

package a2s

import "encoding/binary"

// Bounds on the split replies a client keeps while it waits for one reply:
// at most maxSplits replies in progress and maxSplitBytes bytes of their
// fragments. Beyond either, the oldest reply in progress is dropped, so a
// flood of fragments costs time, not memory.
const (
	maxSplits     = 4
	maxSplitBytes = 1 << 20
	splitHeader   = 12 // FE FF FF FF, u32 id, u8 total, u8 number, u16 size
)

// splitReply is the fragments of one split id received so far.
type splitReply struct {
	id    uint32
	parts [][]byte
	got   int
	bytes int
}

// splits collects the split replies of one call, and remembers why replies
// were dropped, to explain a call that ends without an answer.
type splits struct {
	pending   []*splitReply // oldest first
	bytes     int
	fragments int    // fragments received
	evicted   int    // replies in progress dropped over the bounds
	dropped   int    // replies dropped (wrong type, malformed)
	reason    string // why the last one was dropped
}

func isSplit(d []byte) bool {
	return len(d) >= 4 && binary.LittleEndian.Uint32(d) == 0xFFFFFFFE
}

// drop notes a reply the call cannot use.
func (s *splits) drop(reason string) {
	s.dropped++
	s.reason = reason
}

// add takes one split fragment. It returns the whole reply when d completes
// one, nil otherwise; an error only for a reply it can never read.
func (s *splits) add(d []byte) ([]byte, error) {
	s.fragments++
	if len(d) < splitHeader {
		s.drop("split fragment too short")
		return nil, nil
	}
	id, total, num := binary.LittleEndian.Uint32(d[4:]), int(d[8]), int(d[9])
	if id&0x80000000 != 0 {
		return nil, badAnswer("compressed split replies are not supported")
	}
	if total == 0 || num >= total {
		s.drop("split fragment numbered outside its reply")
		return nil, nil
	}
	r := s.find(id)
	if r == nil {
		r = &splitReply{id: id, parts: make([][]byte, total)}
		s.pending = append(s.pending, r)
	}
	if total != len(r.parts) {
		s.drop("split fragments disagree on their count")
		return nil, nil
	}
	if r.parts[num] != nil {
		return nil, nil // a duplicate
	}
	r.parts[num] = append([]byte{}, d[splitHeader:]...)
	r.got++
	r.bytes += len(d) - splitHeader
	s.bytes += len(d) - splitHeader
	if r.got == total {
		s.remove(r)
		return r.join(), nil
	}
	s.bound()
	return nil, nil
}

func (s *splits) find(id uint32) *splitReply {
	for _, r := range s.pending {
		if r.id == id {
			return r
		}
	}
	return nil
}

func (s *splits) remove(r *splitReply) {
	for i, p := range s.pending {
		if p == r {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			s.bytes -= r.bytes
			return
		}
	}
}

// bound drops the oldest replies in progress while over the bounds.
func (s *splits) bound() {
	for len(s.pending) > 0 && (len(s.pending) > maxSplits || s.bytes > maxSplitBytes) {
		s.remove(s.pending[0])
		s.evicted++
	}
}

func (r *splitReply) join() []byte {
	all := make([]byte, 0, r.bytes)
	for _, p := range r.parts {
		all = append(all, p...)
	}
	return all
}

// failure explains a call that got replies but none it could use (nil when
// nothing came back at all).
func (s *splits) failure() error {
	if n := len(s.pending) + s.evicted; n > 0 {
		return badAnswer("incomplete split reply: %d fragments received, no reply of the %d in progress completed (%d dropped over the client's bounds of %d replies and %d bytes)",
			s.fragments, n, s.evicted, maxSplits, maxSplitBytes)
	}
	if s.dropped > 0 {
		return badAnswer("%s (%d replies dropped)", s.reason, s.dropped)
	}
	return nil
}

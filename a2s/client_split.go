package a2s

import (
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// Bounds on the split replies a client keeps while it waits for one reply:
// at most maxSplits replies in progress and maxSplitBytes bytes of their
// fragments. Beyond either, the oldest reply in progress is dropped, so a
// flood of fragments costs time, not memory.
const (
	maxSplits     = 4
	maxSplitBytes = 1 << 20
	splitMin      = 10 // FE FF FF FF, u32 id, u8 total, u8 number (then u16 size, absent in old engines)
)

// MaxDecompressed is the most bytes a bzip2-compressed split reply (old
// Source engines: bit 31 of the split id set) may decompress to; the size
// its first fragment declares is checked before anything is decompressed,
// and a larger one is refused with a BadAnswerError.
const MaxDecompressed = 256 << 10

// compressedFlag is the split id's bit saying the reply is bzip2-compressed.
const compressedFlag = 0x80000000

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
// one, nil otherwise; an error only for a reply it can never read (a
// compressed one that does not decompress, or is over MaxDecompressed).
// Fragments are kept from their number on: whether they carry the u16 size
// field (absent in some old engines) is told by the first fragment once all
// are in (join).
func (s *splits) add(d []byte) ([]byte, error) {
	s.fragments++
	if len(d) < splitMin {
		s.drop("split fragment too short")
		return nil, nil
	}
	id, total, num := binary.LittleEndian.Uint32(d[4:]), int(d[8]), int(d[9])
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
	r.parts[num] = append([]byte{}, d[splitMin:]...)
	r.got++
	r.bytes += len(d) - splitMin
	s.bytes += len(d) - splitMin
	if r.got == total {
		s.remove(r)
		whole, err := r.join()
		if err != nil {
			return nil, err
		}
		if whole == nil {
			s.drop("split reply whose first fragment starts no reply")
		}
		return whole, nil
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

// join puts a complete reply's fragments together: nil when its first
// fragment does not start a reply in either layout, an error when a
// compressed reply cannot be read.
func (r *splitReply) join() ([]byte, error) {
	skip, ok := r.sizeField()
	if !ok {
		return nil, nil
	}
	all := make([]byte, 0, r.bytes)
	for _, p := range r.parts {
		if len(p) < skip {
			return nil, nil
		}
		all = append(all, p[skip:]...)
	}
	if r.id&compressedFlag != 0 {
		return decompress(all)
	}
	return all, nil
}

// sizeField returns how many bytes of u16 size field each fragment starts
// with (2 in the Source layout, 0 in old engines without it), told by where
// the first fragment's reply starts: FF FF FF FF, or for a compressed reply
// the u32 size and CRC32 then a bzip2 stream ("BZh"). ok is false when
// neither layout fits.
func (r *splitReply) sizeField() (skip int, ok bool) {
	first := r.parts[0]
	at := func(i int, magic string) bool {
		return len(first) >= i+len(magic) && string(first[i:i+len(magic)]) == magic
	}
	start := "\xFF\xFF\xFF\xFF"
	off := 0
	if r.id&compressedFlag != 0 {
		start, off = "BZh", 8
	}
	switch {
	case at(2+off, start):
		return 2, true
	case at(off, start):
		return 0, true
	}
	return 0, false
}

// decompress reads a compressed split reply: the size it decompresses to
// (u32), its CRC32 (u32), then the bzip2 stream. The size is checked
// against MaxDecompressed before anything is decompressed, and no more than
// it is read.
func decompress(b []byte) ([]byte, error) {
	if len(b) < 8 {
		return nil, badAnswer("compressed split reply cut short")
	}
	size, sum := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	if size > MaxDecompressed {
		return nil, badAnswer("compressed split reply of %d bytes once decompressed: over the client's cap of %d bytes, refused", size, MaxDecompressed)
	}
	out, err := io.ReadAll(io.LimitReader(bzip2.NewReader(bytes.NewReader(b[8:])), int64(size)+1))
	if err != nil {
		return nil, badAnswer("compressed split reply: bzip2: %v", err)
	}
	if len(out) != int(size) {
		return nil, badAnswer("compressed split reply decompressed to %d bytes or more, its header says %d", len(out), size)
	}
	if got := crc32.ChecksumIEEE(out); got != sum {
		return nil, badAnswer("compressed split reply: CRC32 %08x, its header says %08x", got, sum)
	}
	return out, nil
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

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
	splitHead     = 8 // FE FF FF FF, u32 id; then the layout's count and number
)

// MaxDecompressed is the most bytes a bzip2-compressed split reply (old
// Source engines: bit 31 of the split id set) may decompress to; the size
// its first fragment declares is checked before anything is decompressed,
// and a larger one is refused with a BadAnswerError.
const MaxDecompressed = 256 << 10

// compressedFlag is the split id's bit saying the reply is bzip2-compressed.
const compressedFlag = 0x80000000

// layout is one of the two ways a split fragment numbers itself after its
// id: Source's (u8 count, u8 number, then a u16 size field that old engines
// leave out) or GoldSrc's (one byte: the number in the high nibble, the
// count in the low one).
type layout struct {
	name string
	head int // bytes of count and number after the id
	// place reads a fragment's count and number (ok false: the fragment
	// cannot be of this layout).
	place func(f []byte) (total, num int, ok bool)
}

var layouts = []layout{
	{"Source", 2, func(f []byte) (int, int, bool) {
		return int(f[0]), int(f[1]), len(f) >= 2 && f[0] > 0 && f[1] < f[0]
	}},
	{"GoldSrc", 1, func(f []byte) (int, int, bool) {
		total, num := int(f[0]&0x0F), int(f[0]>>4)
		return total, num, total > 0 && num < total
	}},
}

// splitReply is the fragments of one split id received so far, each from
// its count byte on (the layout is told once they are all in).
type splitReply struct {
	id    uint32
	frags [][]byte
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
// A reply is complete when its fragments number 0…count-1 in one layout
// (Source's or GoldSrc's, see layouts) and its first fragment starts a
// reply there; whether Source fragments carry the u16 size field (absent in
// some old engines) is told by the first fragment (join).
func (s *splits) add(d []byte) ([]byte, error) {
	s.fragments++
	if len(d) < splitHead+2 {
		s.drop("split fragment too short")
		return nil, nil
	}
	id, f := binary.LittleEndian.Uint32(d[4:]), d[splitHead:]
	if _, _, ok := layouts[0].place(f); !ok {
		if _, _, ok := layouts[1].place(f); !ok {
			s.drop("split fragment numbered outside its reply")
			return nil, nil
		}
	}
	r := s.find(id)
	if r == nil {
		r = &splitReply{id: id}
		s.pending = append(s.pending, r)
	}
	for _, g := range r.frags {
		if bytes.Equal(g, f) {
			return nil, nil // a duplicate
		}
	}
	r.frags = append(r.frags, append([]byte{}, f...))
	r.bytes += len(f)
	s.bytes += len(f)
	for _, l := range layouts {
		parts := r.parts(l)
		if parts == nil {
			continue
		}
		whole, err := r.join(l, parts)
		if err != nil {
			s.remove(r)
			return nil, err
		}
		if whole != nil {
			s.remove(r)
			return whole, nil
		}
	}
	if r.complete() {
		s.remove(r)
		s.drop("split reply whose first fragment starts no reply")
		return nil, nil
	}
	s.bound()
	return nil, nil
}

// parts returns the fragments' payloads in order when they number
// 0…count-1 in layout l (every fragment of it agreeing on the count), else
// nil.
func (r *splitReply) parts(l layout) [][]byte {
	var parts [][]byte
	got := 0
	for _, f := range r.frags {
		total, num, ok := l.place(f)
		if !ok || len(f) < l.head {
			continue
		}
		if parts == nil {
			parts = make([][]byte, total)
		}
		if total != len(parts) || parts[num] != nil {
			continue
		}
		parts[num] = f[l.head:]
		got++
	}
	if parts == nil || got != len(parts) {
		return nil
	}
	return parts
}

// complete reports whether the reply is complete in some layout.
func (r *splitReply) complete() bool {
	for _, l := range layouts {
		if r.parts(l) != nil {
			return true
		}
	}
	return false
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

// join puts a complete reply's fragments (in layout l) together: nil when
// its first fragment does not start a reply there, an error when a
// compressed reply cannot be read. GoldSrc replies are never compressed.
func (r *splitReply) join(l layout, parts [][]byte) ([]byte, error) {
	compressed := r.id&compressedFlag != 0 && l.head == 2
	skip, ok := sizeField(parts[0], compressed)
	if l.head == 1 {
		skip, ok = 0, bytes.HasPrefix(parts[0], []byte("\xFF\xFF\xFF\xFF"))
	}
	if !ok {
		return nil, nil
	}
	all := make([]byte, 0, r.bytes)
	for _, p := range parts {
		if len(p) < skip {
			return nil, nil
		}
		all = append(all, p[skip:]...)
	}
	if compressed {
		return decompress(all)
	}
	return all, nil
}

// sizeField returns how many bytes of u16 size field each Source fragment
// starts with (2 in the Source layout, 0 in old engines without it), told
// by where the first fragment's reply starts: FF FF FF FF, or for a
// compressed reply the u32 size and CRC32 then a bzip2 stream ("BZh"). ok
// is false when neither fits.
func sizeField(first []byte, compressed bool) (skip int, ok bool) {
	at := func(i int, magic string) bool {
		return len(first) >= i+len(magic) && string(first[i:i+len(magic)]) == magic
	}
	start := "\xFF\xFF\xFF\xFF"
	off := 0
	if compressed {
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

package sleep

import (
	"fmt"
	"net/netip"
	"runtime"
	"strings"
	"testing"
)

func src(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 27960)
}

func heldStrings(hs []*Held) []string {
	var out []string
	for _, h := range hs {
		out = append(out, fmt.Sprintf("%s:%s", h.Src.Addr(), strings.TrimSpace(string(h.B))))
	}
	return out
}

// TestHoldBounds: per source, its oldest go first past its datagrams or
// bytes; in total, everyone's oldest go first past the total's; what is
// left comes out in the order it came; a datagram larger than a source may
// hold is not held; the counts follow. (Payloads of 8, 16 and 24 bytes:
// Go size classes, so that bytes held are their lengths.)
func TestHoldBounds(t *testing.T) {
	h := newHold(HoldLimits{PerSource: 2, BytesPerSource: 20, Total: 4, Bytes: 40})
	add := func(i int, b string, n int) int {
		return h.add([]byte(fmt.Sprintf("%-*s", n, b)), src(i), netip.Addr{}, nil)
	}
	if d := add(1, "a1", 8) + add(1, "a2", 8) + add(1, "a3", 8); d != 1 {
		t.Fatalf("3 from one source of 2: dropped %d", d)
	}
	if d := add(2, "b1", 8) + add(3, "c1", 8) + add(3, "c2", 8); d != 1 {
		t.Fatalf("past the total of 4: dropped %d", d)
	}
	if n, b := h.size(); n != 4 || b != 32 {
		t.Fatalf("size %d, %d bytes", n, b)
	}
	if d := add(2, "b2", 16); d != 1 { // past the source's 20 bytes: b1 goes
		t.Fatalf("past a source's bytes: dropped %d", d)
	}
	if d := add(4, "d", 24); d != 1 {
		t.Fatalf("larger than a source may hold: dropped %d", d)
	}
	if d := add(5, "x", 8); d != 1 { // 5 datagrams: a3 goes
		t.Fatalf("dropped %d", d)
	}
	if d := add(6, "y", 16); d != 2 { // 5 datagrams, then 48 bytes: c1 and c2 go
		t.Fatalf("past the total's bytes: dropped %d", d)
	}
	got := fmt.Sprint(heldStrings(h.take()))
	if want := "[10.0.0.2:b2 10.0.0.5:x 10.0.0.6:y]"; got != want {
		t.Fatalf("held %s, want %s", got, want)
	}
	if n, b := h.size(); n != 0 || b != 0 || len(h.bySrc) != 0 {
		t.Fatalf("after take: %d, %d bytes, %d sources", n, b, len(h.bySrc))
	}
	add(1, "again", 8)
	if n := h.clear(); n != 1 {
		t.Fatalf("clear: %d", n)
	}
}

// TestHoldFlood: 10,000 sources of a flood hold at most the totals, every
// source's datagrams in order, the newest kept.
func TestHoldFlood(t *testing.T) {
	lim := HoldLimits{PerSource: DefaultHoldPerSource, BytesPerSource: DefaultHoldBytesPerSource, Total: DefaultHoldTotal, Bytes: DefaultHoldBytes}
	h := newHold(lim)
	for round := 0; round < 3; round++ {
		for i := 0; i < 10_000; i++ {
			h.add(make([]byte, 100+round), src(i), netip.Addr{}, nil)
			if n, b := h.size(); n > lim.Total || b > lim.Bytes {
				t.Fatalf("%d datagrams, %d bytes: past the bounds", n, b)
			}
		}
	}
	out := h.take()
	if len(out) != lim.Total || len(out[0].B) != 102 || out[len(out)-1].Src != src(9999) {
		t.Fatalf("kept %d, first %d bytes from %s", len(out), len(out[0].B), out[len(out)-1].Src)
	}
}

// TestHoldMemory measures what a full hold costs the heap: its bytes plus
// at most heldOverhead per datagram (SECURITY.md's figure).
func TestHoldMemory(t *testing.T) {
	for _, size := range []int{60, 1400} {
		lim := HoldLimits{PerSource: DefaultHoldPerSource, BytesPerSource: DefaultHoldBytesPerSource, Total: DefaultHoldTotal, Bytes: DefaultHoldBytes}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h := newHold(lim)
		b := make([]byte, size)
		for i := 0; i < 20_000; i++ {
			h.add(b, src(i), netip.Addr{}, nil)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		n, bytes := h.size()
		used := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		bound := int64(bytes + n*heldOverhead)
		t.Logf("%d-byte datagrams from 20,000 sources: %d held, %d bytes of datagrams, %d bytes of heap (bound %d)", size, n, bytes, used, bound)
		if used > bound {
			t.Errorf("%d bytes of heap for a full hold, more than its bound %d", used, bound)
		}
		runtime.KeepAlive(h)
	}
}

// FuzzHold: any sequence of datagrams (sources and sizes from the input)
// keeps the hold within its bounds, per source and in total, and take
// gives what is left in the order it came, each source's newest kept.
func FuzzHold(f *testing.F) {
	f.Add([]byte{0, 10, 1, 200, 0, 255, 2, 3})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, ops []byte) {
		lim := HoldLimits{PerSource: 3, BytesPerSource: 600, Total: 7, Bytes: 1500}
		h := newHold(lim)
		var order []int // sequence numbers added, to check take's order
		for i := 0; i+1 < len(ops); i += 2 {
			size := int(ops[i+1])*3 + 8
			b := make([]byte, size)
			copy(b, fmt.Sprint(i))
			h.add(b, src(int(ops[i]%5)), netip.Addr{}, nil)
			order = append(order, i)
			n, bytes := h.size()
			if n > lim.Total || bytes > lim.Bytes {
				t.Fatalf("%d datagrams, %d bytes", n, bytes)
			}
			for _, s := range h.bySrc {
				if s.n > lim.PerSource || s.bytes > lim.BytesPerSource || s.n == 0 {
					t.Fatalf("a source holds %d datagrams, %d bytes", s.n, s.bytes)
				}
			}
		}
		last := -1
		for _, d := range h.take() {
			seq := 0
			fmt.Sscan(strings.TrimRight(string(d.B), "\x00"), &seq)
			if seq <= last {
				t.Fatalf("out of order: %d after %d", seq, last)
			}
			last = seq
		}
	})
}

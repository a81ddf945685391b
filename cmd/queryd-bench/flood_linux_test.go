//go:build linux

package main

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestFloodOptions: the flood's options out of range are refused with
// what is wanted, before any socket is opened.
func TestFloodOptions(t *testing.T) {
	ok := floodOpts{target: "198.18.0.1:27015", duration: time.Second, threads: 1}
	for _, c := range []struct {
		name string
		edit func(*floodOpts)
		want string
	}{
		{"target outside the range", func(o *floodOpts) { o.target = "192.0.2.1:27015" }, "-target must be in"},
		{"no duration", func(o *floodOpts) { o.duration = 0 }, "-duration plus -warmup"},
		{"too long", func(o *floodOpts) { o.duration = 2 * time.Minute; o.warmup = time.Second }, "-duration plus -warmup"},
		{"no thread", func(o *floodOpts) { o.threads = 0 }, "-threads 1 to 8"},
		{"negative rate", func(o *floodOpts) { o.rate = -1 }, "-rate -1"},
		{"rate too high", func(o *floodOpts) { o.rate = 20_000_000 }, "-rate 20000000"},
	} {
		o := ok
		c.edit(&o)
		_, err := flood(o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestSpoof6Frames: -mode spoof6's frames come from as many distinct /64
// sources as asked, inside fd00:5165::/32, each with a right UDP checksum;
// a target outside the range or a count out of bounds is refused.
func TestSpoof6Frames(t *testing.T) {
	mac := []byte{2, 0, 0, 0, 0, 1}
	const n = 5000
	frames, err := spoof6Frames(mac, mac, "[fd00:5164:7864::1]:27015", n)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[[8]byte]bool, n)
	for _, f := range frames {
		var s16 [16]byte
		copy(s16[:], f[22:38])
		if !spoof6Net.Contains(netip.AddrFrom16(s16)) {
			t.Fatalf("source %v outside %s", netip.AddrFrom16(s16), spoof6Net)
		}
		seen[[8]byte(s16[:8])] = true
		pseudo := uint32(17) + uint32(len(f)-54)
		for i := 22; i < 54; i += 2 {
			pseudo += uint32(f[i])<<8 | uint32(f[i+1])
		}
		if c := csum(f[54:], pseudo); c != 0xFFFF {
			t.Fatalf("UDP checksum does not verify: %#x", c)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d distinct /64 sources, want %d", len(seen), n)
	}
	for _, c := range []struct {
		target string
		n      int
		want   string
	}{{"[2001:db8::1]:27015", 1, "-target6 must be in"}, {"[fd00:5164:7864::1]:27015", 0, "-spoofed 0"}, {"[fd00:5164:7864::1]:27015", 1<<22 + 1, "-spoofed"}} {
		if _, err := spoof6Frames(mac, mac, c.target, c.n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s, %d sources: %v, want an error with %q", c.target, c.n, err, c.want)
		}
	}
}

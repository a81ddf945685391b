package responder

import (
	"net/netip"
	"testing"
	"time"

	"github.com/queryd/queryd/dgram"
)

type limitedHandler struct {
	rate  float64
	burst int
}

func (limitedHandler) Name() string         { return "limited" }
func (limitedHandler) Claims(p []byte) bool { return true }
func (limitedHandler) Answer(req []byte, src netip.AddrPort, scratch []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	return out, dgram.Ignored
}
func (h limitedHandler) PacketLimit() (float64, int) { return h.rate, h.burst }

type plainHandler struct{ limitedHandler }

var (
	_ PacketLimited = limitedHandler{}
	_ Handler       = plainHandler{}
)

func (plainHandler) PacketLimit() {} // not PacketLimited's signature

func TestPacketLimiter(t *testing.T) {
	ls := packetLimiters([]Handler{limitedHandler{1, 10}, plainHandler{}, limitedHandler{0, 10}}, 0)
	if ls[0] == nil || ls[1] != nil || ls[2] != nil {
		t.Fatalf("limiters %v: want one for the PacketLimited handler with a positive rate only", ls)
	}
	p := ls[0]
	now := time.Unix(1700000000, 0)
	a := netip.MustParseAddr("127.0.0.1")
	for i := 0; i < 10; i++ {
		if !p.allow(keyOf(a), now) {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	if p.allow(keyOf(a), now) {
		t.Fatal("the 11th request at once was allowed (ioquake3: burst 10)")
	}
	if !p.allow(keyOf(netip.MustParseAddr("127.0.0.2")), now) {
		t.Error("another source was refused")
	}
	if !p.allow(keyOf(a), now.Add(time.Second)) || p.allow(keyOf(a), now.Add(time.Second)) {
		t.Error("want exactly one more request after a second")
	}
	v6a, v6b := netip.MustParseAddr("::1"), netip.MustParseAddr("::2") // the same /64
	for i := 0; i < 10; i++ {
		p.allow(keyOf(v6a), now)
	}
	if p.allow(keyOf(v6b), now) {
		t.Error("a second address of the same IPv6 /64 got its own burst")
	}
	var none *packetLimiter
	if !none.allow(keyOf(a), now) {
		t.Error("a nil limiter refused")
	}
}

// BenchmarkPacketLimiter is the per-request cost for a known source.
func BenchmarkPacketLimiter(b *testing.B) {
	p := newPacketLimiter(limitedHandler{1e9, 1 << 20}, 0)
	ip := netip.MustParseAddr("127.0.0.1")
	now := time.Unix(1700000000, 0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		now = now.Add(time.Millisecond) // 1e6 new tokens each time: never refused
		if !p.allow(keyOf(ip), now) {
			b.Fatal("refused")
		}
	}
}

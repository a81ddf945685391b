package relay

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/queryd/queryd/dgram"
)

func matchQ(p []byte) bool { return bytes.HasPrefix(p, []byte("Q")) }

// The buckets on a fake clock: per source first, then the total; a
// source over its own rate never draws on the total; tokens come back at
// the rates; datagrams no limit matches always pass.
func TestPassLimits(t *testing.T) {
	p := newPassLimits([]dgram.PassLimit{{Match: matchQ, Rate: 5, Burst: 5, SourceRate: 0.1, SourceBurst: 2}})
	var now int64 = 1
	clock := func() int64 { return now }
	src := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}) }
	passed := 0
	for range 3 { // one source: its burst of 2
		if p.allow([]byte("Q"), src(0), clock) {
			passed++
		}
	}
	if passed != 2 {
		t.Fatalf("one source, 3 at once with a source burst of 2: %d passed", passed)
	}
	for i := 1; i <= 10; i++ { // 3 more sources: the total's 3 tokens left
		if p.allow([]byte("Q"), src(i), clock) {
			passed++
		}
	}
	if passed != 5 {
		t.Fatalf("11 sources at once with a total burst of 5: %d passed", passed)
	}
	if !p.allow([]byte("game"), src(0), clock) {
		t.Fatal("a datagram no limit matches was held")
	}
	now += int64(200 * time.Millisecond) // one total token back (5 a second)
	if p.allow([]byte("Q"), src(0), clock) {
		t.Fatal("source 0 passed over its own rate (0.1 a second after 2)")
	}
	if !p.allow([]byte("Q"), src(1), clock) {
		t.Fatal("after 200 ms the total's token was taken by source 0, which was over its own rate")
	}
	now += int64(10 * time.Second) // every bucket refilled
	n := 0
	for i := 20; i < 60; i++ { // 40 sources at once: the total's burst
		if p.allow([]byte("Q"), src(i), clock) {
			n++
		}
	}
	if n != 5 {
		t.Errorf("40 new sources after 10 s: %d passed, want the total burst 5", n)
	}
	if (&passLimits{}).allow([]byte("Q"), src(0), clock) != true || (*passLimits)(nil).allow([]byte("Q"), src(0), clock) != true {
		t.Error("no limits held a datagram")
	}
	if l := newPassLimits([]dgram.PassLimit{{Match: matchQ}, {Rate: 1}}); len(l.limits) != 0 {
		t.Errorf("limits that limit nothing kept: %d", len(l.limits))
	}
}

// A source's /64 is one source; the per-source table forgets the oldest.
func TestPassLimitsSources(t *testing.T) {
	p := newPassLimits([]dgram.PassLimit{{Match: matchQ, SourceRate: 0.001, SourceBurst: 1}})
	clock := func() int64 { return 1 }
	if !p.allow([]byte("Q"), netip.MustParseAddr("2001:db8::1"), clock) || p.allow([]byte("Q"), netip.MustParseAddr("2001:db8::2"), clock) {
		t.Error("two addresses of one /64 had a burst each")
	}
	for i := range passSources + 1 {
		p.allow([]byte("Q"), netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), clock)
	}
	if n := p.limits[0].sources.Len(); n != passSources {
		t.Errorf("%d sources tracked, want at most %d", n, passSources)
	}
}

// Through Forward: what a limit holds is counted as pass_limit and never
// reaches the game server; other datagrams are relayed; SetPassLimits
// replaces the limits.
func TestRelayPassLimit(t *testing.T) {
	game := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: udpAddr(game), OpenRate: 0,
		Pass: []dgram.PassLimit{{Match: matchQ, Rate: 0.001, Burst: 3}}})
	for i := range 10 {
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(10 + i)}), 5000)
		r.Forward([]byte("Q"), src, netip.Addr{}, nopSender)
		r.Forward([]byte("x"), src, netip.Addr{}, nopSender)
	}
	got := map[string]int{}
	buf := make([]byte, 64)
	for {
		game.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, _, err := game.ReadFromUDPAddrPort(buf)
		if err != nil {
			break
		}
		got[string(buf[:n])]++
	}
	if got["Q"] != 3 || got["x"] != 10 {
		t.Errorf("the game server got %v: want 3 Q (the burst) and 10 x", got)
	}
	if n := counter(t, reg, "queryd_relay_dropped_total", "pass_limit"); n != 7 {
		t.Errorf("%v dropped as pass_limit, want 7", n)
	}
	r.SetPassLimits(nil)
	r.Forward([]byte("Q"), netip.MustParseAddrPort("127.0.0.10:5000"), netip.Addr{}, nopSender)
	if n := counter(t, reg, "queryd_relay_dropped_total", "pass_limit"); n != 7 {
		t.Errorf("with the limits removed a Q was held (%v pass_limit)", n)
	}
}

// allow is take without the ticket.
func (p *passLimits) allow(req []byte, ip netip.Addr, clock func() int64) bool {
	_, ok := p.take(req, ip, clock)
	return ok
}

// A datagram that passes the limits but then reaches no game server (here
// a loop: from the game server's own address) gives its tokens back.
func TestRelayPassLimitRefund(t *testing.T) {
	game := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: udpAddr(game), OpenRate: 0,
		Pass: []dgram.PassLimit{{Match: matchQ, Rate: 0.001, Burst: 1, SourceRate: 0.001, SourceBurst: 1}}})
	for range 3 {
		if r.Forward([]byte("Q"), udpAddr(game), netip.Addr{}, nopSender) {
			t.Fatal("a datagram from the game server's own address was relayed")
		}
	}
	if n := counter(t, reg, "queryd_relay_dropped_total", "loop"); n != 3 {
		t.Fatalf("%v loop drops, want 3", n)
	}
	if !r.Forward([]byte("Q"), netip.MustParseAddrPort("127.0.0.9:5000"), netip.Addr{}, nopSender) {
		t.Errorf("the total's one token was spent by datagrams dropped as loops (pass_limit %v)",
			counter(t, reg, "queryd_relay_dropped_total", "pass_limit"))
	}
	if r.Forward([]byte("Q"), netip.MustParseAddrPort("127.0.0.9:5000"), netip.Addr{}, nopSender) {
		t.Error("a second Q passed a total burst of 1")
	}
}

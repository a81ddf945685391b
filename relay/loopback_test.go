package relay

import (
	"net/netip"
	"strings"
	"testing"
)

// With the game server on 127.0.0.1, each client's sessions come from a
// loopback address of its own (the same for every port of a client, and
// for every address of an IPv6 /64), never 127.0.0.1; the game server sees
// them apart, and Peer maps each back, given the address when ports repeat.
func TestRelayLoopbackPerClient(t *testing.T) {
	r, _ := newTestRelay(t, Config{GameServer: handshakeGame(t)})
	if !r.lo.perClient {
		t.Skip("this system cannot bind loopback addresses other than 127.0.0.1 (Linux can): the relay falls back to 127.0.0.1")
	}
	pub := publicFront(t, r)
	seen := map[string]string{} // client → the address the game server saw
	for _, ip := range []string{"127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		p := newPlayer(t, ip, pub)
		if err := p.connect(3e9); err != nil {
			t.Fatal(err)
		}
		if p.play(2, 50e6) == 0 {
			t.Fatalf("player %s got no game answer", udpAddr(p.c))
		}
		for a := range p.seen {
			ap := netip.MustParseAddrPort(a)
			if ap.Addr() == netip.MustParseAddr("127.0.0.1") || !ap.Addr().IsLoopback() {
				t.Errorf("client %s reached the game server from %s; want a loopback address other than 127.0.0.1", udpAddr(p.c), a)
			}
			if prev, ok := seen[ip]; ok && prev != ap.Addr().String() {
				t.Errorf("two ports of client %s came from %s and %s; want one address per client", ip, prev, ap.Addr())
			}
			seen[ip] = ap.Addr().String()
			c, l, err := r.Peer(int(ap.Port()), ap.Addr())
			if err != nil || c != udpAddr(p.c) || l != ap {
				t.Errorf("Peer(%d, %s) = %s, %s, %v; want %s", ap.Port(), ap.Addr(), c, l, err, udpAddr(p.c))
			}
		}
	}
	if seen["127.0.0.2"] == seen["127.0.0.3"] || seen["127.0.0.1"] == seen["127.0.0.2"] {
		t.Errorf("different clients share an address at the game server: %v", seen)
	}
	a := r.lo.addrFor(netip.MustParseAddr("2001:db8:1:2::1"))
	if b := r.lo.addrFor(netip.MustParseAddr("2001:db8:1:2:ffff::9")); a != b {
		t.Errorf("two addresses of one /64 map to %s and %s", a, b)
	}
	if b := r.lo.addrFor(netip.MustParseAddr("2001:db8:1:3::1")); a == b {
		t.Errorf("two /64s map to the same %s", a)
	}
}

// Peer refuses to guess when a port is used at several addresses.
func TestRelayPeerAmbiguousPort(t *testing.T) {
	r, _ := newTestRelay(t, Config{GameServer: handshakeGame(t)})
	c1, c2 := netip.MustParseAddrPort("198.51.100.1:1000"), netip.MustParseAddrPort("198.51.100.2:1000")
	r.mu.Lock()
	for i, c := range []netip.AddrPort{c1, c2} {
		s := &session{client: c, addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 9, 9, byte(i + 1)}), 40000)}
		r.byLocal[s.addr] = s
	}
	r.mu.Unlock()
	_, _, err := r.Peer(40000, netip.Addr{})
	if err == nil || !strings.Contains(err.Error(), `give "addr"`) {
		t.Errorf("Peer of a port two sessions use: %v; want an error asking for addr", err)
	}
	if c, _, err := r.Peer(40000, netip.MustParseAddr("127.9.9.2")); err != nil || c != c2 {
		t.Errorf("Peer(40000, 127.9.9.2) = %s, %v; want %s", c, err, c2)
	}
	r.mu.Lock()
	clear(r.byLocal)
	r.mu.Unlock()
}

// The loop guard refuses the game server's own address (any port, when
// it is on another host; its own address:port, when on loopback) and this
// host's addresses, and lets loopback clients in.
func TestLoopGuard(t *testing.T) {
	host := []netip.Addr{netip.MustParseAddr("203.0.113.5"), netip.MustParseAddr("2001:db8::5")}
	for _, tc := range []struct {
		up, src string
		refuse  bool
	}{
		{"198.51.100.7:27961", "198.51.100.7:27961", true},
		{"198.51.100.7:27961", "198.51.100.7:27015", true},
		{"198.51.100.7:27961", "[::ffff:198.51.100.7]:1", true},
		{"198.51.100.7:27961", "198.51.100.8:27961", false},
		{"198.51.100.7:27961", "203.0.113.5:9", true},
		{"198.51.100.7:27961", "[2001:db8::5]:9", true},
		{"198.51.100.7:27961", "0.0.0.0:9", true},
		{"198.51.100.7:27961", "127.0.0.1:5000", false},
		{"127.0.0.1:27961", "127.0.0.1:27961", true},
		{"127.0.0.1:27961", "127.0.0.1:5000", false},
		{"127.0.0.1:27961", "127.0.0.2:27961", false},
	} {
		g := loopGuard{up: netip.MustParseAddrPort(tc.up)}
		g.host.Store(&host)
		if got := g.refuse(netip.MustParseAddrPort(tc.src)); got != tc.refuse {
			t.Errorf("upstream %s, source %s: refused %v, want %v", tc.up, tc.src, got, tc.refuse)
		}
	}
}

//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/queryd/queryd/responder"
)

// noRouteBack is routed by the server to another interface, not to the
// veth: with rp_filter = 1 the kernel drops what comes from it on the veth.
var noRouteBack = netip.MustParseAddr("198.18.3.7")

// onLinkFresh4 and onLinkFresh6 are on the veth's subnets, and no host
// there has them: the server never has a neighbour entry for them.
var (
	onLinkFresh4 = netip.MustParseAddr("198.18.0.66")
	onLinkFresh6 = netip.MustParseAddr("fd00:5164:7864::66")
)

// strictNet turns rp_filter on in the server's namespace and routes
// noRouteBack's /24 to another interface there (a veth pair of its own).
func strictNet(t *testing.T) func(*testNet) { return strictNetFwd(t, forwarding{}) }

// forwarding is which families the server's namespace forwards.
type forwarding struct{ v4, v6 bool }

// String names the case: "forwarding neither", "IPv4 only", ...
func (f forwarding) String() string {
	switch {
	case f.v4 && f.v6:
		return "forwarding both"
	case f.v4:
		return "forwarding IPv4 only"
	case f.v6:
		return "forwarding IPv6 only"
	}
	return "forwarding neither"
}

// strictNetFwd is strictNet, with forwarding turned on in the server's
// namespace for the families fwd says (newTestNet leaves both off; the
// program's route back for a family that forwards is bpf_fib_lookup's,
// else the mirrored main table's).
func strictNetFwd(t *testing.T, fwd forwarding) func(*testNet) {
	return func(n *testNet) {
		for _, s := range []struct {
			on  bool
			key string
		}{{fwd.v4, "net.ipv4.ip_forward=1"}, {fwd.v6, "net.ipv6.conf.all.forwarding=1"}} {
			if s.on {
				if err := run("ip", "netns", "exec", n.srvNS, "sysctl", "-qw", s.key); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, s := range [][]string{
			{"ip", "netns", "exec", n.srvNS, "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=1", "net.ipv4.conf.default.rp_filter=1", "net.ipv4.conf." + n.srvIf + ".rp_filter=1"},
			{"ip", "-n", n.srvNS, "link", "add", "qxside", "type", "veth", "peer", "name", "qxside1"},
			{"ip", "-n", n.srvNS, "link", "set", "qxside", "up"},
			{"ip", "-n", n.srvNS, "link", "set", "qxside1", "up"},
			{"ip", "-n", n.srvNS, "route", "add", "198.18.3.0/24", "dev", "qxside"},
		} {
			if err := run(s...); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// passed is what a case expects of the program.
const uncounted = -1 // passed before it counts: not a datagram to a listen address

// TestXDPStrict: every frame of issue 22's findings 1, 2 and 5 (rp_filter)
// that the program must not answer, sent raw onto the veth with the
// program on and then off: the program passes it (counted under its
// reason, nothing answered nor dropped) and what comes back is exactly
// what the socket path sends without it. A well-formed query of each
// family first proves the harness sees replies and that the program
// answers it. Four times: on a host that forwards neither family (the
// route back from the mirrored main table), both (bpf_fib_lookup), and
// one family only (issue 39 item 10: each family's route back as the
// kernel finds it; IPv4-only forwarding is every Docker host).
func TestXDPStrict(t *testing.T) {
	for _, fwd := range []forwarding{{}, {true, true}, {true, false}, {false, true}} {
		t.Run(fwd.String(), func(t *testing.T) {
			t.Parallel() // each in namespaces of its own; mostly waiting for replies that do not come
			testStrict(t, fwd)
		})
	}
}

func testStrict(t *testing.T, fwd forwarding) {
	fx := newFixtureWith(t, responder.Limits{}, fixtureOpts{setup: strictNetFwd(t, fwd)})
	w := fx.openWire(t)
	srvMAC := macOf(t, fx.net.srvNS, fx.net.srvIf)
	cliMAC := macOf(t, fx.net.cliNS, fx.net.cliIf)
	// Make sure the server knows the client's MAC (the program's route
	// back needs a neighbour, as the kernel's reply does).
	c := fx.dial(t, cliAddr4, srvAddr4)
	if c.ask(t, a2sInfo, time.Second) == nil {
		t.Fatal("no answer to a socket's A2S_INFO")
	}
	c6 := fx.dial(t, cliAddr6, srvAddr6)
	if c6.ask(t, a2sInfo, time.Second) == nil {
		t.Fatal("no answer to a socket's A2S_INFO over IPv6")
	}
	ip := netip.MustParseAddr
	bcastMAC := net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	otherMAC := net.HardwareAddr{0x02, 0, 0, 0, 0, 0x99}
	v4 := func(src, dst netip.Addr) frame {
		return frame{dstMAC: srvMAC, srcMAC: cliMAC, src: src, dst: dst, payload: a2sInfo}
	}
	with := func(f frame, edit func(*frame)) frame { edit(&f); return f }
	cases := []struct {
		finding, name string
		f             frame
		reason        int // a querydPassReason, or uncounted
	}{
		{"1", "destination 198.18.0.77, not local (a routed guest's)", v4(cliAddr4, ip("198.18.0.77")), int(querydPassReasonPASS_NOT_LOCAL)},
		{"1", "destination the subnet broadcast 198.18.0.255", v4(cliAddr4, ip("198.18.0.255")), int(querydPassReasonPASS_NOT_LOCAL)},
		{"1", "destination the subnet broadcast, broadcast MAC", with(v4(cliAddr4, ip("198.18.0.255")), func(f *frame) { f.dstMAC = bcastMAC }), int(querydPassReasonPASS_NOT_LOCAL)},
		{"1", "destination 255.255.255.255", with(v4(cliAddr4, ip("255.255.255.255")), func(f *frame) { f.dstMAC = bcastMAC }), int(querydPassReasonPASS_NOT_LOCAL)},
		{"1", "destination 224.0.0.1", with(v4(cliAddr4, ip("224.0.0.1")), func(f *frame) { f.dstMAC = net.HardwareAddr{0x01, 0, 0x5e, 0, 0, 1} }), int(querydPassReasonPASS_NOT_LOCAL)},
		{"1", "destination 127.0.0.1 on the wire", v4(cliAddr4, ip("127.0.0.1")), int(querydPassReasonPASS_NOT_LOCAL)},
		{"1", "destination ff02::1", with(v4(cliAddr6, ip("ff02::1")), func(f *frame) { f.dstMAC = net.HardwareAddr{0x33, 0x33, 0, 0, 0, 1} }), int(querydPassReasonPASS_NOT_LOCAL)},
		{"1", "destination ff02::1, our MAC", v4(cliAddr6, ip("ff02::1")), int(querydPassReasonPASS_NOT_LOCAL)},
		{"1", "destination MAC another host's", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.dstMAC = otherMAC }), int(querydPassReasonPASS_NOT_LOCAL)},
		{"1", "source 255.255.255.255", v4(ip("255.255.255.255"), srvAddr4), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source 224.0.0.5", v4(ip("224.0.0.5"), srvAddr4), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source 0.0.0.0", v4(ip("0.0.0.0"), srvAddr4), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source 127.0.0.1", v4(ip("127.0.0.1"), srvAddr4), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source 240.0.0.1", v4(ip("240.0.0.1"), srvAddr4), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source the server's own address", v4(srvAddr4, srvAddr4), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source the subnet broadcast", v4(ip("198.18.0.255"), srvAddr4), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source ff02::1", v4(ip("ff02::1"), srvAddr6), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source ::1", v4(ip("::1"), srvAddr6), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source ::", v4(ip("::"), srvAddr6), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source ::ffff:198.18.0.2 (IPv4-mapped)", v4(ip("::ffff:198.18.0.2"), srvAddr6), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source fe80::2 (link-local)", v4(ip("fe80::2"), srvAddr6), int(querydPassReasonPASS_MARTIAN)},
		{"1", "source MAC ff:ff:ff:ff:ff:ff with a victim's address", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.srcMAC = bcastMAC }), int(querydPassReasonPASS_MARTIAN)},
		{"2", "IPv4 total length 4 bytes short", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.totLenDelta = -4 }), int(querydPassReasonPASS_MALFORMED)},
		{"2", "IPv4 total length 4 bytes past the frame", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.totLenDelta = 4 }), int(querydPassReasonPASS_MALFORMED)},
		{"2", "IPv4 header checksum wrong", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.badIPCheck = true }), int(querydPassReasonPASS_MALFORMED)},
		{"2", "IPv6 version nibble 4", with(v4(cliAddr6, srvAddr6), func(f *frame) { f.version6 = 4 }), int(querydPassReasonPASS_MALFORMED)},
		{"2", "IPv6 payload length 4 more than the UDP length", with(v4(cliAddr6, srvAddr6), func(f *frame) { f.plenDelta = 4 }), int(querydPassReasonPASS_MALFORMED)},
		{"2", "IPv6 UDP checksum 0", with(v4(cliAddr6, srvAddr6), func(f *frame) { f.zeroUDPCheck = true }), int(querydPassReasonPASS_MALFORMED)},
		{"3", "802.1Q tag in band (VLAN 10)", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.vlan = 10 }), uncounted},
		{"5", "source with no route back through the veth (rp_filter = 1)", v4(noRouteBack, srvAddr4), int(querydPassReasonPASS_NO_ROUTE)},
	}

	// The control: a well-formed query of each family is answered by the
	// program, once.
	for _, good := range []frame{v4(cliAddr4, srvAddr4), v4(cliAddr6, srvAddr6)} {
		before, st0 := fx.count(t, pA2S, oChallenged), mustStats(t, fx)
		if n := w.replies(t, good.bytes(), 300*time.Millisecond); n != 1 {
			t.Errorf("a well-formed raw A2S_INFO from %v got %d replies, want 1", good.src, n)
		}
		if fx.count(t, pA2S, oChallenged) != before+1 {
			st1 := mustStats(t, fx)
			for r := range st1.Passed {
				if d := st1.Passed[r] - st0.Passed[r]; d != 0 {
					t.Logf("from %v: passed as %s %d times", good.src, passLabel[r], d)
				}
			}
			t.Fatalf("the well-formed raw A2S_INFO from %v was not challenged by the program", good.src)
		}
	}
	// An on-link source the server has no neighbour entry for: in a family
	// that does not forward the program answers it from the mirrored main
	// table (to the request's MAC); in one that forwards, bpf_fib_lookup
	// has no neighbour and it passes as no_route (the kernel resolves it).
	for _, fresh := range []struct {
		f   frame
		fwd bool
	}{{v4(onLinkFresh4, srvAddr4), fwd.v4}, {v4(onLinkFresh6, srvAddr6), fwd.v6}} {
		st0 := mustStats(t, fx)
		n := w.replies(t, fresh.f.bytes(), 300*time.Millisecond)
		st1 := mustStats(t, fx)
		noRoute := st1.Passed[querydPassReasonPASS_NO_ROUTE] - st0.Passed[querydPassReasonPASS_NO_ROUTE]
		if fresh.fwd && (n != 0 || noRoute != 1) {
			t.Errorf("a fresh on-link source %v, its family forwarding: %d replies, %d passed as no_route; want 0 and 1", fresh.f.src, n, noRoute)
		}
		if !fresh.fwd && (n != 1 || noRoute != 0) {
			t.Errorf("a fresh on-link source %v, its family not forwarding: %d replies, %d passed as no_route; want 1 and 0", fresh.f.src, n, noRoute)
		}
	}
	for _, tc := range cases {
		b := tc.f.bytes()
		fx.setEnabled(t, false)
		off := w.replies(t, b, 150*time.Millisecond)
		fx.setEnabled(t, true)
		st0, _ := fx.stats()
		on := w.replies(t, b, 150*time.Millisecond)
		st1, _ := fx.stats()
		if on != off {
			t.Errorf("finding %s, %s: %d replies with XDP on, %d with it off", tc.finding, tc.name, on, off)
		}
		if st1.Req != st0.Req {
			t.Errorf("finding %s, %s: the program answered or dropped it", tc.finding, tc.name)
		}
		for r := range st1.Passed {
			want := uint64(0)
			if r == tc.reason {
				want = 1
			}
			if got := st1.Passed[r] - st0.Passed[r]; got != want {
				t.Errorf("finding %s, %s: passed as %s %d times, want %d", tc.finding, tc.name, passLabel[r], got, want)
			}
		}
		t.Logf("finding %s, %s: passed (%s); %d replies with XDP on and off", tc.finding, tc.name, reasonName(tc.reason), on)
	}
}

func reasonName(r int) string {
	if r == uncounted {
		return "not counted: not to a listen address"
	}
	return passLabel[r]
}

// TestXDPRouteCacheFollowsRoutes: the program remembers a source's route
// back (struct peer) only until the routes change: a source answered
// twice (the second time from the cache) whose route then moves to
// another interface gets nothing from the program within a second and a
// half, passed as no_route.
func TestXDPRouteCacheFollowsRoutes(t *testing.T) {
	t.Parallel() // namespaces of its own; it mostly waits for replies
	fx := newFixtureWith(t, responder.Limits{}, fixtureOpts{setup: strictNet(t)})
	w := fx.openWire(t)
	src := netip.MustParseAddr("198.18.4.9")
	if err := run("ip", "-n", fx.net.srvNS, "route", "add", "198.18.4.0/24", "dev", fx.net.srvIf); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // the mirror has the route
	b := frame{dstMAC: macOf(t, fx.net.srvNS, fx.net.srvIf), srcMAC: macOf(t, fx.net.cliNS, fx.net.cliIf), src: src, dst: srvAddr4, payload: a2sInfo}.bytes()
	for i := range 2 {
		before := fx.count(t, pA2S, oChallenged)
		if n := w.replies(t, b, 300*time.Millisecond); n != 1 || fx.count(t, pA2S, oChallenged) != before+1 {
			t.Fatalf("query %d with a route back: %d replies, the program challenged %d", i+1, n, fx.count(t, pA2S, oChallenged)-before)
		}
	}
	if err := run("ip", "-n", fx.net.srvNS, "route", "replace", "198.18.4.0/24", "dev", "qxside"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	st0, _ := fx.stats()
	n := w.replies(t, b, 300*time.Millisecond)
	st1, _ := fx.stats()
	if n != 0 || st1.Req != st0.Req {
		t.Fatalf("after the route moved: %d replies, the program answered or dropped it", n)
	}
	if got := st1.Passed[querydPassReasonPASS_NO_ROUTE] - st0.Passed[querydPassReasonPASS_NO_ROUTE]; got != 1 {
		t.Fatalf("after the route moved: passed as no_route %d times, want 1", got)
	}
}

//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/queryd/queryd/responder"
)

// TestDivertStrict: divert makes the fast path's checks before it takes a
// query (locality and strictness: a frame the kernel would not deliver is
// not for this host's game server either). The fixture's listen port
// stands for the game port and the hidden one at once (the rewrite is then
// to the same port), so that raw frames exercise the divert hook alone:
// a well-formed A2S_INFO to the divert address is answered by the program
// and counted as diverted (xdp); each frame the checks refuse, and a game
// datagram, passes untouched, counted as diverted (passed), neither
// answered nor dropped nor counted under queryd_xdp_passed_total. Our own
// address as the source is refused by the route back, after the rewrite:
// the kernel drops it at the hidden port as it would at the game port.
func TestDivertStrict(t *testing.T) {
	t.Parallel() // namespaces of its own; it mostly waits for replies
	fx := newFixture(t, responder.Limits{})
	dv, err := fx.divert(testServer, []DivertAddr{
		{Game: netip.AddrPortFrom(srvAddr4, testPort), Hidden: testPort},
		{Game: netip.AddrPortFrom(srvAddr6, testPort), Hidden: testPort},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dv.Close() })
	w := fx.openWire(t)
	srvMAC := macOf(t, fx.net.srvNS, fx.net.srvIf)
	cliMAC := macOf(t, fx.net.cliNS, fx.net.cliIf)
	for _, pair := range [][2]netip.Addr{{cliAddr4, srvAddr4}, {cliAddr6, srvAddr6}} { // the neighbours known
		if fx.dial(t, pair[0], pair[1]).ask(t, a2sInfo, time.Second) == nil {
			t.Fatalf("no answer to a socket's A2S_INFO to %v", pair[1])
		}
	}
	ip := netip.MustParseAddr
	v4 := func(src, dst netip.Addr) frame {
		return frame{dstMAC: srvMAC, srcMAC: cliMAC, src: src, dst: dst, payload: a2sInfo}
	}
	with := func(f frame, edit func(*frame)) frame { edit(&f); return f }
	counts := func() DivertCounts {
		c, err := dv.Counts()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	for _, good := range []frame{v4(cliAddr4, srvAddr4), v4(cliAddr6, srvAddr6)} {
		before := counts()
		if n := w.replies(t, good.bytes(), 300*time.Millisecond); n != 1 {
			t.Fatalf("a well-formed raw A2S_INFO to %v got %d replies, want 1", good.dst, n)
		}
		if got := counts(); got.XDP != before.XDP+1 || got.Passed != before.Passed {
			t.Fatalf("A2S_INFO to %v: diverted %+v → %+v, want one more answered by the program", good.dst, before, got)
		}
	}
	cases := []struct {
		name string
		f    frame
	}{
		{"destination MAC another host's", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.dstMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x99} })},
		{"source MAC broadcast", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.srcMAC = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} })},
		{"source 127.0.0.1", v4(ip("127.0.0.1"), srvAddr4)},
		{"IPv4 header checksum wrong", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.badIPCheck = true })},
		{"IPv4 total length 4 bytes short", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.totLenDelta = -4 })},
		{"source ::1", v4(ip("::1"), srvAddr6)},
		{"IPv6 UDP checksum 0", with(v4(cliAddr6, srvAddr6), func(f *frame) { f.zeroUDPCheck = true })},
		{"a game datagram (not claimed)", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.payload = []byte("\xFF\xFF\xFF\xFFq\x00\x00\x00\x00") })},
		{"Quake 3 getchallenge (not claimed)", with(v4(cliAddr4, srvAddr4), func(f *frame) { f.payload = []byte("\xFF\xFF\xFF\xFFgetchallenge") })},
	}
	// Our own address as the source is found by the route back (route.h),
	// after the rewrite: passed by the parse path as martian (to the
	// hidden port), and the kernel drops it as it would at the game port.
	before, st0 := counts(), mustStats(t, fx)
	if n := w.replies(t, v4(srvAddr4, srvAddr4).bytes(), 200*time.Millisecond); n != 0 {
		t.Errorf("source the server's own address: %d replies", n)
	}
	if got, st1 := counts(), mustStats(t, fx); got.Socket != before.Socket+1 || st1.Passed[querydPassReasonPASS_MARTIAN] != st0.Passed[querydPassReasonPASS_MARTIAN]+1 {
		t.Errorf("source the server's own address: diverted %+v → %+v, martian passes %d → %d", before, got,
			st0.Passed[querydPassReasonPASS_MARTIAN], st1.Passed[querydPassReasonPASS_MARTIAN])
	}
	for _, tc := range cases {
		before, st0 := counts(), mustStats(t, fx)
		if n := w.replies(t, tc.f.bytes(), 200*time.Millisecond); n != 0 {
			t.Logf("%s: %d replies (the kernel's: here the socket path holds the game port too)", tc.name, n)
		}
		got, st1 := counts(), mustStats(t, fx)
		if got.Passed != before.Passed+1 || got.XDP != before.XDP || got.Socket != before.Socket || got.Dropped != before.Dropped {
			t.Errorf("%s: diverted %+v → %+v, want one more passed untouched", tc.name, before, got)
		}
		if st1.Req != st0.Req || st1.Passed != st0.Passed {
			t.Errorf("%s: the parse path saw it (answered, dropped or passed by reason)", tc.name)
		}
	}
}

func mustStats(t *testing.T, fx *fixture) querydStats {
	t.Helper()
	st, ok := fx.stats()
	if !ok {
		t.Fatal("no stats")
	}
	return st
}

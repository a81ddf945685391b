//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/queryd/queryd/responder"
)

// The routed guest: a third namespace behind the server's, on a /24 of its
// own that the server routes (a VM or a container with its own game server
// on the host that runs queryd).
var (
	guestAddr4  = netip.MustParseAddr("198.18.2.1")
	guestGW4    = netip.MustParseAddr("198.18.2.254")
	guestPrefix = "198.18.2.0/24"
)

// routedGuest makes the guest namespace, joined to the server's by a veth,
// with forwarding on in the server's namespace and the client routing the
// guest's /24 through the server; a UDP server in the guest answers every
// datagram on testPort with "guest:" and the request.
func routedGuest(t *testing.T) func(*testNet) {
	return func(n *testNet) {
		id := fmt.Sprintf("%d%d", os.Getpid()%10000, time.Now().UnixNano()%1000)
		gns, sif, gif := "qdx-g"+id, "qxg"+id, "qxh"+id
		t.Cleanup(func() { run("ip", "netns", "del", gns) })
		for _, s := range [][]string{
			{"ip", "netns", "add", gns},
			{"ip", "link", "add", sif, "netns", n.srvNS, "type", "veth", "peer", "name", gif, "netns", gns},
			{"ip", "-n", n.srvNS, "addr", "add", guestGW4.String() + "/24", "dev", sif},
			{"ip", "-n", gns, "addr", "add", guestAddr4.String() + "/24", "dev", gif},
			{"ip", "-n", n.srvNS, "link", "set", sif, "up"},
			{"ip", "-n", gns, "link", "set", gif, "up"},
			{"ip", "-n", gns, "link", "set", "lo", "up"},
			{"ip", "-n", gns, "route", "add", "default", "via", guestGW4.String()},
			{"ip", "-n", n.cliNS, "route", "add", guestPrefix, "via", srvAddr4.String()},
			{"ip", "netns", "exec", n.srvNS, "sysctl", "-qw", "net.ipv4.ip_forward=1"},
		} {
			if err := run(s...); err != nil {
				t.Fatal(err)
			}
		}
		var pc net.PacketConn
		err := inNS(gns, func() (err error) {
			pc, err = net.ListenPacket("udp4", fmt.Sprintf("0.0.0.0:%d", testPort))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close() })
		go func() {
			buf := make([]byte, 2048)
			for {
				n, from, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				pc.WriteTo(append([]byte("guest:"), buf[:n]...), from)
			}
		}()
	}
}

// TestXDPRoutedGuest (finding 1, the practical case): queryd on the host
// with the default wildcard listen and XDP on the uplink; a query to the
// routed guest's address reaches the guest's own game server, which
// answers, with XDP on as with it off (before, the program answered it
// from the guest's address with the host's state). The host forwards, so
// the program's route back is bpf_fib_lookup's here: queries to the host
// are still answered in the program, and a source routed out of another
// interface (rp_filter = 1) gets nothing on either path.
func TestXDPRoutedGuest(t *testing.T) {
	guest := routedGuest(t)
	strict := strictNet(t)
	fx := newFixtureWith(t, responder.Limits{}, fixtureOpts{setup: func(n *testNet) { guest(n); strict(n) }})
	c := fx.dial(t, cliAddr4, guestAddr4)
	for _, on := range []bool{true, false} {
		fx.setEnabled(t, on)
		st0, _ := fx.stats()
		reply := c.ask(t, a2sInfo, time.Second)
		st1, _ := fx.stats()
		if !bytes.HasPrefix(reply, []byte("guest:")) {
			t.Fatalf("XDP on %v: a query to the guest got % x, want the guest's own answer", on, reply)
		}
		if st1.Req != st0.Req {
			t.Errorf("XDP on %v: the program answered or dropped a query to the guest", on)
		}
		if on && st1.Passed[querydPassReasonPASS_NOT_LOCAL] != st0.Passed[querydPassReasonPASS_NOT_LOCAL]+1 {
			t.Errorf("the query to the guest was not passed as not_local: %v → %v", st0.Passed, st1.Passed)
		}
	}
	fx.setEnabled(t, true)
	host := fx.dial(t, cliAddr4, srvAddr4)
	before := fx.count(t, pA2S, oChallenged)
	if host.ask(t, a2sInfo, time.Second) == nil || fx.count(t, pA2S, oChallenged) != before+1 {
		t.Fatal("a query to the host, which forwards, was not answered by the program (bpf_fib_lookup's route back)")
	}
	w := fx.openWire(t)
	f := frame{dstMAC: macOf(t, fx.net.srvNS, fx.net.srvIf), srcMAC: macOf(t, fx.net.cliNS, fx.net.cliIf), src: noRouteBack, dst: srvAddr4, payload: a2sInfo}
	for _, on := range []bool{true, false} {
		fx.setEnabled(t, on)
		st0, _ := fx.stats()
		if n := w.replies(t, f.bytes(), 300*time.Millisecond); n != 0 {
			t.Errorf("XDP on %v: a source with no route back through the veth got %d replies", on, n)
		}
		st1, _ := fx.stats()
		if on && st1.Passed[querydPassReasonPASS_NO_ROUTE] != st0.Passed[querydPassReasonPASS_NO_ROUTE]+1 {
			t.Errorf("the source with no route back was not passed as no_route: %v → %v", st0.Passed, st1.Passed)
		}
	}
}

// TestXDPDeny (finding 5): [limits] deny = ["198.18.0.3/32"] and an IPv6
// /64: the denied sources get nothing with XDP on (the program drops them,
// counted denied) and off (the socket path drops them, counted denied);
// the other client address is answered on both paths.
func TestXDPDeny(t *testing.T) {
	t.Parallel() // namespaces of its own; it mostly waits for replies
	deny, err := responder.NewDeny([]netip.Prefix{netip.MustParsePrefix("198.18.0.3/32"), netip.MustParsePrefix("fd00:5164:7864::/64")})
	if err != nil {
		t.Fatal(err)
	}
	fx := newFixtureWith(t, responder.Limits{}, fixtureOpts{deny: deny})
	bad := fx.dial(t, cliAddr4b, srvAddr4)
	bad6 := fx.dial(t, cliAddr6, srvAddr6)
	good := fx.dial(t, cliAddr4, srvAddr4)
	for _, on := range []bool{true, false} {
		fx.setEnabled(t, on)
		for _, c := range []*client{bad, bad6} {
			prog := fx.count(t, pA2S, int(querydOutcomeOUT_DENIED))
			all := requests(t, fx, "a2s", "denied")
			if r := c.ask(t, a2sInfo, 300*time.Millisecond); r != nil {
				t.Errorf("XDP on %v: denied source %v answered: % x", on, c.c.LocalAddr(), r)
			}
			if got := requests(t, fx, "a2s", "denied"); got != all+1 {
				t.Errorf("XDP on %v: queryd_requests_total{a2s,denied} grew by %v, want 1", on, got-all)
			}
			wantProg := prog
			if on {
				wantProg++
			}
			if got := fx.count(t, pA2S, int(querydOutcomeOUT_DENIED)); got != wantProg {
				t.Errorf("XDP on %v: the program counted %d denied, want %d", on, got-prog, wantProg-prog)
			}
		}
		if good.ask(t, a2sInfo, time.Second) == nil {
			t.Errorf("XDP on %v: the source not denied got nothing", on)
		}
	}
	// A reload to no list: the program and the socket path answer again.
	fx.fp.SetDeny(testServer, nil)
	fx.srv.SetDeny(nil)
	fx.setEnabled(t, true)
	deadline := time.Now().Add(3 * time.Second)
	for bad.ask(t, a2sInfo, 200*time.Millisecond) == nil {
		if time.Now().After(deadline) {
			t.Fatal("after the deny list was emptied the source still gets nothing")
		}
	}
}

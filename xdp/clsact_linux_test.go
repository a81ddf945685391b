//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/responder"
)

// divertGamePort is the game port in the egress tests: a port nothing
// binds, which only the egress rewrite can put on a datagram.
const divertGamePort = 27999

// egressNet is a divert whose hidden ports are plain sockets of the test's
// (in the server namespace), and client sockets to send to: what leaves a
// hidden socket through the veth must arrive from the game port.
type egressNet struct {
	fx            *fixture
	dv            *Divert
	hidden        map[netip.Addr]*net.UDPConn // by address (IPv4, IPv6)
	plain         *net.UDPConn                // a socket that is not a hidden one (IPv4)
	client        map[netip.Addr]*net.UDPConn // by the server's address it hears from
	clientAddrFor map[netip.Addr]netip.Addr
}

// newEgressNet makes the fixture (o) and diverts srvAddr4 and srvAddr6 at
// divertGamePort to hidden sockets of its own; err is Divert's.
func newEgressNet(t *testing.T, o fixtureOpts) (*egressNet, error) {
	t.Helper()
	fx := newFixtureWith(t, responder.Limits{}, o)
	e := &egressNet{fx: fx, hidden: map[netip.Addr]*net.UDPConn{}, client: map[netip.Addr]*net.UDPConn{},
		clientAddrFor: map[netip.Addr]netip.Addr{srvAddr4: cliAddr4, srvAddr6: cliAddr6}}
	listen := func(ns string, a netip.Addr) *net.UDPConn {
		var c *net.UDPConn
		err := inNS(ns, func() (err error) {
			c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(a, 0)))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	var addrs []DivertAddr
	for _, a := range []netip.Addr{srvAddr4, srvAddr6} {
		e.hidden[a] = listen(fx.net.srvNS, a)
		e.client[a] = listen(fx.net.cliNS, e.clientAddrFor[a])
		addrs = append(addrs, DivertAddr{Game: netip.AddrPortFrom(a, divertGamePort), Hidden: port(e.hidden[a])})
	}
	e.plain = listen(fx.net.srvNS, srvAddr4)
	var err error
	e.dv, err = fx.divert(testServer, addrs, nil)
	if err == nil {
		t.Cleanup(func() { e.dv.Close() })
	}
	return e, err
}

func port(c *net.UDPConn) uint16 { return c.LocalAddr().(*net.UDPAddr).AddrPort().Port() }

// sendFrom sends a datagram from the socket from to the client listening
// for srv's family and returns the source the client saw.
func (e *egressNet) sendFrom(t *testing.T, from *net.UDPConn, srv netip.Addr) netip.AddrPort {
	t.Helper()
	cli := e.client[srv]
	to := netip.AddrPortFrom(e.clientAddrFor[srv], port(cli))
	if _, err := from.WriteToUDPAddrPort([]byte("reply"), to); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	cli.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, src, err := cli.ReadFromUDPAddrPort(buf)
	if err != nil || string(buf[:n]) != "reply" {
		t.Fatalf("from %v to %v: %q, %v", from.LocalAddr(), to, buf[:n], err)
	}
	return netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
}

// checkRewrite: replies from the hidden sockets arrive from the game port
// over IPv4 and IPv6, one from another socket keeps its port, and the
// program counted the two.
func (e *egressNet) checkRewrite(t *testing.T) {
	t.Helper()
	before, err := e.dv.Rewritten()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []netip.Addr{srvAddr4, srvAddr6} {
		if got, want := e.sendFrom(t, e.hidden[a], a), netip.AddrPortFrom(a, divertGamePort); got != want {
			t.Errorf("from the hidden port %d: the client saw %v, want %v (the game port)", port(e.hidden[a]), got, want)
		}
	}
	if got := e.sendFrom(t, e.plain, srvAddr4); got.Port() != port(e.plain) {
		t.Errorf("from a socket that is not a hidden one: the client saw %v, want port %d untouched", got, port(e.plain))
	}
	if n, err := e.dv.Rewritten(); err != nil || n != before+2 {
		t.Errorf("queryd_xdp_divert_rewritten_total %d → %d (%v), want 2 more", before, n, err)
	}
}

// tcShow is `tc ARGS` in namespace ns (tc(8) of iproute2: the tool an
// operator reads the filters with).
func tcShow(t *testing.T, ns string, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns, "tc"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tc %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func needTC(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skip("the tc filter tests need tc(8) (iproute2): skipped")
	}
}

// ourFilter is how tc shows queryd's egress filter.
const ourFilter = "pref 20804 bpf chain 0 handle 0x5144 queryd_divert_tc direct-action"

// TestDivertEgress (issue 40): divert's egress program gives the hidden
// socket's replies the game port back (IPv4 and IPv6; another socket's
// untouched) through each attach: tcx (Linux 6.6) and the tc clsact
// filter of older kernels (forced here). With tcx, tc lists no filter;
// with clsact, tc lists ours at its priority and handle, direct-action;
// when the fast path closes, our filter is gone and so is the clsact
// qdisc queryd made.
func TestDivertEgress(t *testing.T) {
	t.Parallel() // namespaces of its own; it mostly waits for replies
	needTC(t)
	for _, clsact := range []bool{false, true} {
		name := map[bool]string{false: "tcx", true: "clsact"}[clsact]
		t.Run(name, func(t *testing.T) {
			if _, k, ok := HostKernel(); !clsact && ok && !k.AtLeast(KernelTCX) {
				t.Skipf("Linux %v has no tcx: skipped", k)
			}
			e, err := newEgressNet(t, fixtureOpts{clsact: clsact})
			if err != nil {
				t.Fatal(err)
			}
			e.checkRewrite(t)
			ns, ifc := e.fx.net.srvNS, e.fx.net.srvIf
			filters := tcShow(t, ns, "filter", "show", "dev", ifc, "egress")
			if has := strings.Contains(filters, ourFilter); has != clsact {
				t.Errorf("tc filter show egress (%s attach):\n%s", name, filters)
			}
			e.fx.stop()
			if f := tcShow(t, ns, "filter", "show", "dev", ifc, "egress"); strings.Contains(f, "queryd_divert_tc") {
				t.Errorf("after the fast path closed, tc still lists our filter:\n%s", f)
			}
			if q := tcShow(t, ns, "qdisc", "show", "dev", ifc); strings.Contains(q, "clsact") {
				t.Errorf("after the fast path closed, the clsact qdisc queryd made is still there:\n%s", q)
			}
		})
	}
}

// TestDivertClsactShared (issue 40): on an interface whose clsact qdisc
// already carries someone else's egress filter (before ours: pref 100,
// a program that passes everything on), queryd adds its own beside it, the
// rewrite works, and on close queryd deletes its filter only: theirs and
// the qdisc stay.
func TestDivertClsactShared(t *testing.T) {
	needTC(t)
	setup := func(n *testNet) {
		for _, s := range [][]string{
			{"ip", "netns", "exec", n.srvNS, "tc", "qdisc", "add", "dev", n.srvIf, "clsact"},
			{"ip", "netns", "exec", n.srvNS, "tc", "filter", "add", "dev", n.srvIf, "egress", "pref", "100", "bpf", "da", "obj", "divert_bpfel.o", "sec", "tc"},
		} {
			if err := run(s...); err != nil {
				t.Skipf("tc cannot add a bpf filter here: %v: skipped", err)
			}
		}
	}
	e, err := newEgressNet(t, fixtureOpts{clsact: true, setup: setup})
	if err != nil {
		t.Fatal(err)
	}
	ns, ifc := e.fx.net.srvNS, e.fx.net.srvIf
	if f := tcShow(t, ns, "filter", "show", "dev", ifc, "egress"); !strings.Contains(f, ourFilter) || !strings.Contains(f, "pref 100 bpf") {
		t.Fatalf("want theirs (pref 100) and ours:\n%s", f)
	}
	e.checkRewrite(t)
	e.fx.stop()
	f := tcShow(t, ns, "filter", "show", "dev", ifc, "egress")
	if strings.Contains(f, "queryd_divert_tc") || !strings.Contains(f, "pref 100 bpf chain 0 handle 0x1 divert_bpfel.o:[tc]") {
		t.Errorf("after close: want theirs only:\n%s", f)
	}
	if q := tcShow(t, ns, "qdisc", "show", "dev", ifc); !strings.Contains(q, "clsact") {
		t.Errorf("after close the clsact qdisc queryd did not make is gone:\n%s", q)
	}
}

// TestDivertClsactOccupied (issue 40): another filter at queryd's
// priority and handle is refused by name, never replaced: Divert fails
// saying so, and theirs is still there.
func TestDivertClsactOccupied(t *testing.T) {
	needTC(t)
	setup := func(n *testNet) {
		for _, s := range [][]string{
			{"ip", "netns", "exec", n.srvNS, "tc", "qdisc", "add", "dev", n.srvIf, "clsact"},
			{"ip", "netns", "exec", n.srvNS, "tc", "filter", "add", "dev", n.srvIf, "egress", "pref", "20804", "handle", "0x5144", "bpf", "da", "obj", "divert_bpfel.o", "sec", "tc"},
		} {
			if err := run(s...); err != nil {
				t.Skipf("tc cannot add a bpf filter here: %v: skipped", err)
			}
		}
	}
	e, err := newEgressNet(t, fixtureOpts{clsact: true, setup: setup})
	if err == nil || !strings.Contains(err.Error(), `is "divert_bpfel.o:[tc]", not queryd's: not replaced`) {
		t.Fatalf("Divert with our priority and handle taken: %v, want it refused by name", err)
	}
	t.Log(err)
	if f := tcShow(t, e.fx.net.srvNS, "filter", "show", "dev", e.fx.net.srvIf, "egress"); !strings.Contains(f, "handle 0x5144 divert_bpfel.o:[tc]") {
		t.Errorf("theirs is gone:\n%s", f)
	}
}

// TestDivertClsactStale (issue 40): a killed queryd leaves its tc filter
// (a filter is not a BPF link): the next start replaces it, and its own
// program rewrites (the stale filter's program has an empty table: were
// it left, nothing would be rewritten). On close no filter is left.
func TestDivertClsactStale(t *testing.T) {
	needTC(t)
	setup := func(n *testNet) {
		var objs divertObjects
		if err := loadDivertObjects(&objs, nil); err != nil {
			t.Fatal(err)
		}
		defer objs.Close() // the filter holds the program
		err := inNS(n.srvNS, func() error {
			ifc, err := net.InterfaceByName(n.srvIf)
			if err != nil {
				return err
			}
			c, err := attachClsact(ifc.Index, n.srvIf, objs.QuerydDivertTc)
			if err == nil {
				c.nl.close() // killed: nothing deleted
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	e, err := newEgressNet(t, fixtureOpts{clsact: true, setup: setup})
	if err != nil {
		t.Fatal(err)
	}
	ns, ifc := e.fx.net.srvNS, e.fx.net.srvIf
	if f := tcShow(t, ns, "filter", "show", "dev", ifc, "egress"); strings.Count(f, "queryd_divert_tc") != 1 {
		t.Errorf("want our one filter:\n%s", f)
	}
	e.checkRewrite(t)
	e.fx.stop()
	if f := tcShow(t, ns, "filter", "show", "dev", ifc, "egress"); strings.Contains(f, "queryd_divert_tc") {
		t.Errorf("after close:\n%s", f)
	}
}

// TestDivertNoTCX (issue 40): the fallback's decision, on this kernel that
// has tcx: when AttachTCX answers as a kernel without tcx does
// (ebpf.ErrNotSupported, cilium/ebpf's feature probe), divert attaches the
// tc filter and starts; any other refusal (EPERM here) is divert's error,
// with no tc filter left behind.
func TestDivertNoTCX(t *testing.T) {
	needTC(t)
	for _, tc := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"not supported", fmt.Errorf("tcx: %w", ebpf.ErrNotSupported), true},
		{"refused", fmt.Errorf("attach tcx link: %w", unix.EPERM), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := attachTCX
			attachTCX = func(link.TCXOptions) (link.Link, error) { return nil, tc.err }
			t.Cleanup(func() { attachTCX = orig })
			e, err := newEgressNet(t, fixtureOpts{})
			if (err == nil) != tc.ok {
				t.Fatalf("Divert: %v, want ok %v", err, tc.ok)
			}
			f := tcShow(t, e.fx.net.srvNS, "filter", "show", "dev", e.fx.net.srvIf, "egress")
			if strings.Contains(f, ourFilter) != tc.ok {
				t.Fatalf("tc filter show egress:\n%s", f)
			}
			if tc.ok {
				e.checkRewrite(t)
			} else if !errors.Is(err, unix.EPERM) {
				t.Errorf("Divert: %v, want tcx's EPERM", err)
			}
		})
	}
}

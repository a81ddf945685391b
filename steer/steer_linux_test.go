//go:build linux

package steer

import (
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// needRoot skips t unless it may load BPF programs.
func needRoot(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("steer: loads a BPF program: -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("steer: loading an SK_REUSEPORT program needs root (CAP_BPF)")
	}
}

// group is a reuseport group on loopback: its sockets and its address.
type group struct {
	addr     netip.AddrPort
	proven   []int
	ordinary []int
}

// openGroup binds np proven and no ordinary sockets to one port of ip.
func openGroup(t *testing.T, ip netip.Addr, np, no int) *group {
	t.Helper()
	g := &group{}
	for i := 0; i < np+no; i++ {
		fd := reuseSocket(t, netip.AddrPortFrom(ip, g.addr.Port()))
		if i == 0 {
			sa, err := unix.Getsockname(fd)
			if err != nil {
				t.Fatal(err)
			}
			port := 0
			switch a := sa.(type) {
			case *unix.SockaddrInet4:
				port = a.Port
			case *unix.SockaddrInet6:
				port = a.Port
			}
			g.addr = netip.AddrPortFrom(ip, uint16(port))
		}
		if i < np {
			g.proven = append(g.proven, fd)
		} else {
			g.ordinary = append(g.ordinary, fd)
		}
	}
	return g
}

func reuseSocket(t *testing.T, ap netip.AddrPort) int {
	t.Helper()
	var (
		family = unix.AF_INET
		sa     unix.Sockaddr
	)
	if ap.Addr().Is6() {
		family, sa = unix.AF_INET6, &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	} else {
		sa = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, sa); err != nil {
		t.Fatal(err)
	}
	return fd
}

// send sends n datagrams to dst from n sockets bound to src (n source ports).
func send(t *testing.T, src netip.Addr, dst netip.AddrPort, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)), net.UDPAddrFromAddrPort(dst))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte("query")); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
}

// drain reads every socket of fds and returns the sources by how many
// datagrams came from each.
func drain(t *testing.T, fds []int) map[netip.Addr]int {
	t.Helper()
	got := map[netip.Addr]int{}
	buf := make([]byte, 64)
	for _, fd := range fds {
		for {
			_, from, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
			if err != nil {
				break
			}
			switch a := from.(type) {
			case *unix.SockaddrInet4:
				got[netip.AddrFrom4(a.Addr)]++
			case *unix.SockaddrInet6:
				got[netip.AddrFrom16(a.Addr)]++
			}
		}
	}
	return got
}

// TestSteerProven attaches the program to a group of 2 proven and 3
// ordinary sockets: a proven source's datagrams, from 16 source ports, all
// land on the proven sockets, the others' on the ordinary ones; once the
// proven entry has expired, the same source lands on the ordinary ones.
func TestSteerProven(t *testing.T) {
	needRoot(t)
	s, err := New(64, time.Minute)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer s.Close()
	g := openGroup(t, netip.MustParseAddr("127.0.0.1"), 2, 3)
	grp, err := s.Attach(g.proven, g.ordinary)
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	defer grp.Close()

	proven := netip.MustParseAddr("127.0.0.2")
	s.Prove(proven)
	others := []netip.Addr{netip.MustParseAddr("127.0.0.3"), netip.MustParseAddr("127.0.0.4"), netip.MustParseAddr("127.0.0.5")}
	send(t, proven, g.addr, 16)
	for _, o := range others {
		send(t, o, g.addr, 16)
	}
	time.Sleep(50 * time.Millisecond)
	onProven, onOrdinary := drain(t, g.proven), drain(t, g.ordinary)
	if onProven[proven] != 16 || onOrdinary[proven] != 0 {
		t.Errorf("proven source: %d datagrams on the proven sockets, %d on the ordinary ones; want 16 and 0", onProven[proven], onOrdinary[proven])
	}
	for _, o := range others {
		if onProven[o] != 0 || onOrdinary[o] != 16 {
			t.Errorf("unproven %s: %d on the proven sockets, %d on the ordinary ones; want 0 and 16", o, onProven[o], onOrdinary[o])
		}
	}

	if err := s.expire(proven); err != nil {
		t.Fatal(err)
	}
	send(t, proven, g.addr, 16)
	time.Sleep(50 * time.Millisecond)
	onProven, onOrdinary = drain(t, g.proven), drain(t, g.ordinary)
	if onProven[proven] != 0 || onOrdinary[proven] != 16 {
		t.Errorf("expired source: %d on the proven sockets, %d on the ordinary ones; want 0 and 16", onProven[proven], onOrdinary[proven])
	}
	c, err := grp.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if c.Proven != 16 || c.Ordinary != 64 || c.Expired != 16 {
		t.Errorf("counts %+v, want 16 proven, 64 ordinary, 16 expired", c)
	}
}

// TestSteerIPv6Prefix: an IPv6 source is proven by its /64.
func TestSteerIPv6Prefix(t *testing.T) {
	needRoot(t)
	s, err := New(64, time.Minute)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer s.Close()
	lo := netip.MustParseAddr("::1")
	if c, err := net.ListenUDP("udp6", net.UDPAddrFromAddrPort(netip.AddrPortFrom(lo, 0))); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		c.Close()
	}
	g := openGroup(t, lo, 1, 2)
	grp, err := s.Attach(g.proven, g.ordinary)
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	defer grp.Close()
	send(t, lo, g.addr, 8)
	time.Sleep(50 * time.Millisecond)
	if n := drain(t, g.proven)[lo]; n != 0 {
		t.Fatalf("before Prove: %d datagrams on the proven socket", n)
	}
	drain(t, g.ordinary)
	s.Prove(netip.MustParseAddr("::1:2:3:4")) // same /64 as ::1
	send(t, lo, g.addr, 8)
	time.Sleep(50 * time.Millisecond)
	if n := drain(t, g.proven)[lo]; n != 8 {
		t.Errorf("proven /64: %d of 8 datagrams on the proven socket", n)
	}
}

// TestSteerCost measures the program's own time per datagram
// (kernel.bpf_stats_enabled, for the run only) for 2,000 datagrams from
// proven sources and 2,000 from others, and fails above 5 µs a datagram
// (a map lookup and a socket pick: a few hundred ns).
func TestSteerCost(t *testing.T) {
	needRoot(t)
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		t.Skipf("BPF statistics: %v", err)
	}
	defer stats.Close()
	s, err := New(4096, time.Minute)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer s.Close()
	g := openGroup(t, netip.MustParseAddr("127.0.0.1"), 2, 2)
	grp, err := s.Attach(g.proven, g.ordinary)
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	defer grp.Close()
	var proven, others []netip.Addr
	for i := 0; i < 20; i++ {
		p, o := netip.AddrFrom4([4]byte{127, 0, 1, byte(i)}), netip.AddrFrom4([4]byte{127, 0, 2, byte(i)})
		s.Prove(p)
		proven, others = append(proven, p), append(others, o)
	}
	for _, load := range []struct {
		name    string
		sources []netip.Addr
		fds     []int
	}{{"proven", proven, g.proven}, {"unproven", others, g.ordinary}} {
		s0, err := grp.objs.Steer.Stats()
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range load.sources {
			send(t, src, g.addr, 100)
			drain(t, load.fds)
		}
		s1, err := grp.objs.Steer.Stats()
		if err != nil {
			t.Fatal(err)
		}
		runs := s1.RunCount - s0.RunCount
		if runs != 2000 {
			t.Fatalf("%s: the program ran %d times for 2,000 datagrams", load.name, runs)
		}
		ns := float64(s1.Runtime-s0.Runtime) / float64(runs)
		t.Logf("%s sources: the program's %.0f ns a datagram (%d datagrams)", load.name, ns, runs)
		if ns > 5000 {
			t.Errorf("%s sources: %.0f ns a datagram, want under 5,000", load.name, ns)
		}
	}
}

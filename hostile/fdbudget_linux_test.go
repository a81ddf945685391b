package hostile

import (
	"github.com/queryd/queryd/internal/testkit/querydtest"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/testkit"
)

// TestDescriptorBudget runs the daemon under `ulimit -n 1024` with relay
// mode and SAGL HTTP on, at their default caps (4,096 relay sessions, 256
// HTTP connections) that together pass the limit. queryd must lower the
// caps to fit (and say so), so that 1,500 relay clients from as many
// addresses and 300 idle HTTP connections cannot take every descriptor: no
// upstream socket fails to open, the process stays below the limit, and
// afterwards a legitimate client, a new player and a feed reconnect are
// served within 2 s.
func TestDescriptorBudget(t *testing.T) {
	if why := rawSupported(); why != "" {
		t.Skip("skipped: " + why)
	}
	const nofile, clients, idleHTTP = 1024, 1500, 300
	httpAddr := testkit.FreeTCPAddr(t)
	d := newDaemon(t, Tables{
		// No /24 cap nor reserve: the clients may take every session the
		// descriptor budget leaves.
		"relay":  {"upstream": echoUpstream(t), "share_ipv4_24": 0.0, "proven_reserve": 0.0},
		"sagl":   {"http": httpAddr},
		"listen": {"workers": testWorkers},
	})
	d.NoFile = nofile
	d.Start(t)
	if !strings.Contains(d.Output(), "caps lowered") {
		t.Errorf("the daemon did not say it lowered its caps to RLIMIT_NOFILE %d:\n%s", nofile, d.Output())
	}
	before := d.Metrics(t)
	conns := holdHTTP(t, httpAddr, idleHTTP)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	raw, err := newRawSender(netip.MustParseAddrPort(d.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	p := newPacer(3000)
	for i := 0; i < clients; i++ {
		p.Wait(i)
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 13, byte(i >> 8), byte(i)}), 40000)
		if err := raw.Send(src, relayPacket); err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
	}
	waitFor(2*time.Second, func() bool {
		m := d.Metrics(t).Sub(before)
		return querydtest.RelayHandled(m) >= clients
	})
	after := d.Metrics(t)
	delta := after.Sub(before)
	fds := openFDs(t, d.Pid())
	t.Logf("%d relay clients from as many addresses and %d idle HTTP connections under ulimit -n %d: %.0f relay sessions open, %d descriptors open",
		clients, idleHTTP, nofile, after.Sum("queryd_relay_sessions"), fds)
	relayFigures(t, delta)
	if n := delta.Sum("queryd_relay_dropped_total", "reason", "dial"); n > 0 {
		t.Errorf("%.0f upstream sockets could not be opened: the caps did not keep queryd below its descriptor limit", n)
	}
	if fds > nofile*3/4+128 {
		t.Errorf("%d descriptors open with the limit at %d: the caps should keep them near 3/4 of it", fds, nofile)
	}
	checkRecovered(t, d)
}

// holdHTTP opens n TCP connections to addr and keeps them open (idle).
func holdHTTP(t testing.TB, addr string, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Logf("HTTP connection %d: %v", i, err)
			break
		}
		conns = append(conns, c)
	}
	return conns
}

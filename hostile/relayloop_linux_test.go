package hostile

import (
	"bytes"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/netnstest"
)

// pingPong is an off-host stand-in for a game server that answers every
// datagram to its sender (up to bound answers, as the stand-in),
// on netnstest.ClientAddr4 in the client namespace.
type pingPong struct {
	c        *net.UDPConn
	received atomic.Int64
}

func startPingPong(t *testing.T, ns string, port, bound int) *pingPong {
	t.Helper()
	var c *net.UDPConn
	err := netnstest.Do(ns, func() (err error) {
		c, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netnstest.ClientAddr4, uint16(port))))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	g := &pingPong{c: c}
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if g.received.Add(1) <= int64(bound) {
				c.WriteToUDPAddrPort(append([]byte("pong "), buf[:n]...), from)
			}
		}
	}()
	return g
}

// TestRelayLoopOffHost is the loop: the game server on another
// host (a network namespace: queryd on 198.18.0.1, the game server on
// 198.18.0.2:27961, one that answers everything). One datagram spoofed
// from the game server's own address to the public port was relayed to
// it, its answer relayed back to its own port, which answered that, and so
// on: 300 datagrams (the stand-in's bound) from one. Now datagrams from
// the game server's address (its port or another) and from this host's own
// address are dropped as loop, and a real player on another address is
// still relayed.
func TestRelayLoopOffHost(t *testing.T) {
	if why := rawSupported(); why != "" {
		t.Skip("skipped: " + why)
	}
	n := netnstest.New(t)
	const gamePort = 27961
	game := startPingPong(t, n.ClientNS, gamePort, 300)
	d := newDaemon(t, nil)
	port := netip.MustParseAddrPort(d.UDPAddr).Port()
	pub := netip.AddrPortFrom(netnstest.ServerAddr4, port)
	d.WriteConfig(t, baseTables(), Tables{"listen": {"udp": []string{pub.String()}},
		"relay": {"upstream": netip.AddrPortFrom(netnstest.ClientAddr4, gamePort).String()}})
	d.Netns = n.ServerNS
	d.Start(t)

	var raw *rawSender
	if err := netnstest.Do(n.ClientNS, func() (err error) { raw, err = newNetRawSender(pub); return err }); err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, src := range []netip.AddrPort{
		netip.AddrPortFrom(netnstest.ClientAddr4, gamePort), // the game server's own port
		netip.AddrPortFrom(netnstest.ClientAddr4, 27015),    // another of its ports
	} {
		if err := raw.Send(src, relayPacket); err != nil {
			t.Fatal(err)
		}
	}
	var self *net.UDPConn // a datagram from the host's own address (a local process)
	if err := netnstest.Do(n.ServerNS, func() (err error) {
		self, err = net.DialUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netnstest.ServerAddr4, 0)), net.UDPAddrFromAddrPort(pub))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	self.Write(relayPacket)
	var loops float64
	waitFor(3*time.Second, func() bool {
		loops = d.Metrics(t).Sum("queryd_relay_dropped_total", "reason", "loop")
		return loops >= 3
	})
	time.Sleep(300 * time.Millisecond) // a loop would have run by now
	reached := game.received.Load()
	t.Logf("3 datagrams from the game server's address (2 ports) and the host's own: %.0f dropped as loop; the game server got %d datagrams", loops, reached)
	if loops != 3 || reached != 0 {
		t.Errorf("%.0f dropped as loop, %d reached the game server; want 3 and 0 (before: one datagram made 300)", loops, reached)
	}
	// Counted as what happened (issue 39, 8): dropped by the relay, not
	// forwarded (before, every one counted outcome="forwarded").
	m := d.Metrics(t)
	if fw, dr := m.Sum("queryd_requests_total", "outcome", "forwarded"), m.Sum("queryd_requests_total", "outcome", "relay_dropped"); fw != 0 || dr != 3 {
		t.Errorf("queryd_requests_total: forwarded %.0f, relay_dropped %.0f; want 0 and 3", fw, dr)
	}

	var c *net.UDPConn // a real player from another address of the client's host
	if err := netnstest.Do(n.ClientNS, func() (err error) {
		c, err = net.DialUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netnstest.ClientAddr4b, 0)), net.UDPAddrFromAddrPort(pub))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(relayPacket)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 2048)
	k, err := c.Read(buf)
	if err != nil || !bytes.Equal(buf[:k], append([]byte("pong "), relayPacket...)) {
		t.Fatalf("a player on %s through the relay: %q, %v; want the game server's answer", netnstest.ClientAddr4b, buf[:k], err)
	}
	if got := game.received.Load(); got != 1 {
		t.Errorf("the game server got %d datagrams for the player's one", got)
	}
	if fw := d.Metrics(t).Sum("queryd_requests_total", "outcome", "forwarded"); fw != 1 {
		t.Errorf("queryd_requests_total{outcome=\"forwarded\"} %.0f for the player's one datagram", fw)
	}
}

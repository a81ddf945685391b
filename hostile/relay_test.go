package hostile

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"
)

// echoUpstream is a fake game server on loopback: it answers every datagram
// with "echo:" and the datagram. It closes when t ends.
func echoUpstream(t testing.TB) string {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			c.WriteToUDP(append([]byte("echo:"), buf[:n]...), from)
		}
	}()
	return c.LocalAddr().String()
}

// relayAsk sends a game packet (one no protocol claims) from ip through the
// relay and reports whether the game server's echo comes back within limit.
func relayAsk(t testing.TB, d *Daemon, ip string, limit time.Duration) bool {
	t.Helper()
	c, err := net.DialUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip)}, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(d.UDPAddr)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := []byte("\xFF\xFF\xFF\xFFgetchallenge " + ip)
	deadline := time.Now().Add(limit)
	buf := make([]byte, 2048)
	for time.Now().Before(deadline) {
		c.Write(msg)
		c.SetReadDeadline(time.Now().Add(250 * time.Millisecond))
		n, err := c.Read(buf)
		if err == nil && bytes.Equal(buf[:n], append([]byte("echo:"), msg...)) {
			return true
		}
	}
	return false
}

// TestRelaySessionFlood runs relay mode in front of a fake game server and
// sends one game packet from each of 5,000 spoofed sources — more than the
// 4,096 relay sessions — then has a new real player connect. Spoofed
// sessions must not lock real players out of the game server (before the
// relay evicted idle sessions when full, they did for 2 minutes).
func TestRelaySessionFlood(t *testing.T) {
	if why := rawSupported(); why != "" {
		t.Skip("skipped: " + why)
	}
	up := echoUpstream(t)
	d := StartDaemon(t, Tables{"relay": {"upstream": up}})
	if !relayAsk(t, d, "127.0.0.3", 2*time.Second) {
		t.Fatalf("the relay does not pass a game packet before the flood")
	}
	raw, err := newRawSender(netip.MustParseAddrPort(d.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	p := newPacer(5000)
	for i := 0; i < 5000; i++ {
		p.Wait(i)
		src := netip.AddrPortFrom(netip.MustParseAddr(sourceIP(40, i)), 27005)
		if err := raw.Send(src, []byte(fmt.Sprintf("\xFF\xFF\xFF\xFFgetchallenge %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until the daemon has handled every spoofed datagram (a session
	// opened, or a drop counted for it).
	var m Metrics
	waitFor(10*time.Second, func() bool {
		m = d.Metrics(t)
		return m.Sum("queryd_relay_sessions_opened_total")+m.Sum("queryd_relay_dropped_total") >= 5001
	})
	t.Logf("after 5,000 spoofed sources: relay sessions %.0f, evicted %.0f, dropped as sessions_full %.0f", m.Sum("queryd_relay_sessions"),
		m.Sum("queryd_relay_sessions_evicted_total"), m.Sum("queryd_relay_dropped_total", "reason", "sessions_full"))
	if m.Sum("queryd_relay_sessions") < 4096 {
		t.Errorf("the flood did not fill the relay's 4,096 sessions (%.0f opened, %.0f open): the test proves nothing",
			m.Sum("queryd_relay_sessions_opened_total"), m.Sum("queryd_relay_sessions"))
	}
	if !relayAsk(t, d, "127.0.0.4", 3*time.Second) {
		t.Errorf("a new player's game packet is not relayed after a spoofed flood: relay sessions %.0f, dropped as sessions_full %.0f",
			d.Metrics(t).Sum("queryd_relay_sessions"), d.Metrics(t).Sum("queryd_relay_dropped_total", "reason", "sessions_full"))
	}
}

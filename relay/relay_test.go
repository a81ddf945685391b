package relay

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// echoGame is a fake game server on loopback: it answers every datagram with
// "from <port> " and the datagram, so a test sees which upstream port (which
// session) carried it.
func echoGame(t *testing.T) netip.AddrPort {
	t.Helper()
	c := listenLoopback(t)
	go func() {
		buf := make([]byte, 65535)
		for {
			n, src, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			c.WriteToUDPAddrPort(append([]byte(fmt.Sprintf("from %d ", src.Port())), buf[:n]...), src)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

func listenLoopback(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// publicSender sends from one socket, as the responder's public socket does.
type publicSender struct{ c *net.UDPConn }

func (s publicSender) SendFrom(b []byte, _ netip.Addr, dst netip.AddrPort) error {
	_, err := s.c.WriteToUDPAddrPort(b, dst)
	return err
}

// publicFront stands in for the responder: a public socket whose every
// datagram goes to the relay. It returns the public address.
func publicFront(t *testing.T, r *Relay) netip.AddrPort {
	t.Helper()
	pub := listenLoopback(t)
	go func() {
		buf := make([]byte, 65535)
		for {
			n, src, err := pub.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			r.Forward(buf[:n], src, netip.Addr{}, publicSender{pub})
		}
	}()
	return pub.LocalAddr().(*net.UDPAddr).AddrPort()
}

func newTestRelay(t *testing.T, cfg Config) (*Relay, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	cfg.Registry = reg
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	r.freshHold = 0 // the tests of eviction order set it where they test it
	return r, reg
}

// ask sends msg from c to pub and returns the reply and who sent it.
func ask(t *testing.T, c *net.UDPConn, pub netip.AddrPort, msg []byte) (string, netip.AddrPort) {
	t.Helper()
	if _, err := c.WriteToUDPAddrPort(msg, pub); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 65535)
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("no reply to %.20q: %v", msg, err)
	}
	return string(buf[:n]), from
}

func upstreamPort(t *testing.T, reply string) int {
	t.Helper()
	var port int
	if _, err := fmt.Sscanf(reply, "from %d ", &port); err != nil {
		t.Fatalf("reply %.40q: %v", reply, err)
	}
	return port
}

func TestRelayKeepsClientsApart(t *testing.T) {
	r, reg := newTestRelay(t, Config{GameServer: echoGame(t)})
	pub := publicFront(t, r)
	a, b := listenLoopback(t), listenLoopback(t)

	ra, from := ask(t, a, pub, []byte("hello A"))
	if from != pub || !strings.HasSuffix(ra, " hello A") {
		t.Fatalf("A got %q from %s, want the echo from the public %s", ra, from, pub)
	}
	rb, from := ask(t, b, pub, []byte("hello B"))
	if from != pub || !strings.HasSuffix(rb, " hello B") {
		t.Fatalf("B got %q from %s", rb, from)
	}
	pa, pb := upstreamPort(t, ra), upstreamPort(t, rb)
	if pa == pb {
		t.Fatalf("A and B share upstream port %d", pa)
	}
	for i := 0; i < 3; i++ { // a client keeps its session
		again, _ := ask(t, a, pub, []byte("again"))
		if upstreamPort(t, again) != pa {
			t.Fatalf("A moved from port %d to %q", pa, again)
		}
	}
	if r.Sessions() != 2 {
		t.Errorf("%d sessions, want 2", r.Sessions())
	}
	for port, c := range map[int]*net.UDPConn{pa: a, pb: b} {
		got, _, err := r.Peer(port, netip.Addr{})
		if want := c.LocalAddr().(*net.UDPAddr).AddrPort(); err != nil || got != want {
			t.Errorf("Peer(%d) = %s, %v; want %s", port, got, err, want)
		}
	}
	if _, _, err := r.Peer(1, netip.Addr{}); err == nil {
		t.Error("Peer of a port without a session answered")
	}
	if _, _, err := r.Peer(70000, netip.Addr{}); err == nil {
		t.Error("Peer(70000) answered")
	}
	if n := counter(t, reg, "queryd_relay_packets_total", "upstream"); n != 5 {
		t.Errorf("%v datagrams upstream, want 5", n)
	}
	if n := counter(t, reg, "queryd_relay_sessions_opened_total", ""); n != 2 {
		t.Errorf("%v sessions opened, want 2", n)
	}
}

func TestRelayLargeDatagram(t *testing.T) {
	r, _ := newTestRelay(t, Config{GameServer: echoGame(t)})
	pub := publicFront(t, r)
	c := listenLoopback(t)
	msg := bytes.Repeat([]byte("0123456789"), 6000) // 60,000 bytes
	got, _ := ask(t, c, pub, msg)
	if !strings.HasSuffix(got, string(msg)) {
		t.Errorf("a 60,000-byte datagram came back as %d bytes", len(got))
	}
}

func TestRelayIdleExpiry(t *testing.T) {
	r, _ := newTestRelay(t, Config{GameServer: echoGame(t), IdleTimeout: 150 * time.Millisecond})
	pub := publicFront(t, r)
	c := listenLoopback(t)
	first, _ := ask(t, c, pub, []byte("x"))
	port := upstreamPort(t, first)
	if _, _, err := r.Peer(port, netip.Addr{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for r.Sessions() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if r.Sessions() != 0 {
		t.Fatal("the idle session did not end")
	}
	if _, _, err := r.Peer(port, netip.Addr{}); err == nil {
		t.Error("Peer still answers for an ended session")
	}
	second, _ := ask(t, c, pub, []byte("y")) // a new session
	if r.Sessions() != 1 || !strings.HasSuffix(second, " y") {
		t.Errorf("after expiry: %d sessions, reply %q", r.Sessions(), second)
	}
}

// An active session does not expire: traffic either way keeps it.
func TestRelayActiveSessionStays(t *testing.T) {
	r, _ := newTestRelay(t, Config{GameServer: echoGame(t), IdleTimeout: 300 * time.Millisecond})
	pub := publicFront(t, r)
	c := listenLoopback(t)
	first, _ := ask(t, c, pub, []byte("x"))
	for i := 0; i < 8; i++ {
		time.Sleep(100 * time.Millisecond)
		got, _ := ask(t, c, pub, []byte("x"))
		if upstreamPort(t, got) != upstreamPort(t, first) {
			t.Fatalf("the session changed while active: %q then %q", first, got)
		}
	}
}

func TestRelayDrops(t *testing.T) {
	game := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: game.LocalAddr().(*net.UDPAddr).AddrPort(), MaxSessions: 1, LoadingGrace: time.Minute})
	send := senderFunc(func([]byte, netip.Addr, netip.AddrPort) error { return nil })
	a := netip.MustParseAddrPort("127.0.0.1:40001")
	r.Forward([]byte("first client"), a, netip.Addr{}, send)
	r.mu.Lock()
	r.promoteLocked(r.bySrc[a], stateLive) // playing: not evicted for a newcomer
	r.mu.Unlock()
	r.Forward([]byte("second client"), netip.MustParseAddrPort("127.0.0.2:40002"), netip.Addr{}, send)
	if n := counter(t, reg, "queryd_relay_dropped_total", "sessions_full"); n != 1 || r.Sessions() != 1 {
		t.Errorf("max_sessions 1: %v dropped, %d sessions", n, r.Sessions())
	}
	r.Forward(make([]byte, maxDatagram+1), a, netip.Addr{}, send)
	if n := counter(t, reg, "queryd_relay_dropped_total", "too_large"); n != 1 {
		t.Errorf("a datagram over 65,535 bytes: %v dropped as too_large", n)
	}
	r.Close()
	r.Forward([]byte("late"), a, netip.Addr{}, send)
	if r.Sessions() != 0 {
		t.Error("sessions left after Close")
	}
}

func TestNewRelayRefusesNoUpstream(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("a relay without upstream was made")
	}
}

type senderFunc func(b []byte, local netip.Addr, dst netip.AddrPort) error

func (f senderFunc) SendFrom(b []byte, local netip.Addr, dst netip.AddrPort) error {
	return f(b, local, dst)
}

// counter reads one counter (with label value lv, or none) from reg.
func counter(t *testing.T, reg *prometheus.Registry, name, lv string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if lv == "" || (len(m.GetLabel()) > 0 && m.GetLabel()[0].GetValue() == lv) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// With every session taken, a new client evicts the oldest fresh session
// (one the game server has sent no game datagram), however busy; a
// playing one is never evicted while quiet for less than LoadingGrace.
func TestRelayEvictsOldestFresh(t *testing.T) {
	game := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: game.LocalAddr().(*net.UDPAddr).AddrPort(), MaxSessions: 3,
		LoadingGrace: 300 * time.Millisecond})
	send := senderFunc(func([]byte, netip.Addr, netip.AddrPort) error { return nil })
	player := netip.MustParseAddrPort("127.0.0.1:41001")
	older := netip.MustParseAddrPort("127.0.0.2:41002")
	younger := netip.MustParseAddrPort("127.0.0.3:41003")
	for _, c := range []netip.AddrPort{player, older, younger} {
		r.Forward([]byte("hello"), c, netip.Addr{}, send)
	}
	r.mu.Lock()
	r.promoteLocked(r.bySrc[player], stateLive)
	r.mu.Unlock()
	in := func(c netip.AddrPort) bool {
		r.mu.RLock()
		defer r.mu.RUnlock()
		return r.bySrc[c] != nil
	}
	r.Forward([]byte("hello"), younger, netip.Addr{}, send) // busy, but fresh
	r.Forward([]byte("hello"), netip.MustParseAddrPort("127.0.0.4:41004"), netip.Addr{}, send)
	if !in(player) || in(older) || !in(younger) {
		t.Fatalf("after the first newcomer: player %v, older fresh %v, younger fresh %v; want only the older fresh gone",
			in(player), in(older), in(younger))
	}
	r.Forward([]byte("hello"), netip.MustParseAddrPort("127.0.0.5:41005"), netip.Addr{}, send)
	r.Forward([]byte("hello"), netip.MustParseAddrPort("127.0.0.6:41006"), netip.Addr{}, send)
	if !in(player) {
		t.Fatal("newcomers evicted the playing session while fresh ones were there")
	}
	r.mu.Lock() // every session playing now
	for _, s := range r.bySrc {
		r.promoteLocked(s, stateLive)
	}
	r.mu.Unlock()
	r.Forward([]byte("hello"), netip.MustParseAddrPort("127.0.0.7:41007"), netip.Addr{}, send)
	if n := counter(t, reg, "queryd_relay_dropped_total", "sessions_full"); n != 1 || !in(player) {
		t.Fatalf("every session playing and active: %v dropped as sessions_full, player kept %v", n, in(player))
	}
	time.Sleep(400 * time.Millisecond) // all quiet past LoadingGrace
	r.Forward([]byte("hello"), netip.MustParseAddrPort("127.0.0.8:41008"), netip.Addr{}, send)
	if !in(netip.MustParseAddrPort("127.0.0.8:41008")) {
		t.Error("a newcomer was not let in once a playing session had been quiet past LoadingGrace")
	}
	if n := counter(t, reg, "queryd_relay_sessions_evicted_total", ""); n != 4 {
		t.Errorf("%v sessions evicted, want 4", n)
	}
}

package hostile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/netnstest"
)

// handshakeGame is a stand-in for a Quake 3 game server: getchallenge gets
// a challenge bound to the sender's address and port, connect with it gets
// connectResponse, and game packets (not connectionless) from a client that
// connected get "game <the address the game server saw>". A blind spoofer
// gets challenges (connectionless) but never a game packet, as from a real
// ioquake3 server.
type handshakeGame struct {
	c        *net.UDPConn
	addr     string
	received atomic.Int64
}

// startHandshakeGame listens on 127.0.0.1 (in network namespace ns when
// set) until t ends.
func startHandshakeGame(t testing.TB, ns string) *handshakeGame {
	t.Helper()
	var c *net.UDPConn
	err := inNS(ns, func() (err error) {
		c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadBuffer(4 << 20)
	t.Cleanup(func() { c.Close() })
	g := &handshakeGame{c: c, addr: c.LocalAddr().String()}
	go g.serve()
	return g
}

func (g *handshakeGame) serve() {
	challenges := map[netip.AddrPort]string{}
	connected := map[netip.AddrPort]bool{}
	buf := make([]byte, 2048)
	for {
		n, from, err := g.c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		g.received.Add(1)
		p := buf[:n]
		switch {
		case bytes.HasPrefix(p, []byte("\xFF\xFF\xFF\xFFgetchallenge")):
			if len(challenges) > 1<<20 {
				clear(challenges)
			}
			ch := fmt.Sprint(rand.Uint32())
			challenges[from] = ch
			g.c.WriteToUDPAddrPort([]byte("\xFF\xFF\xFF\xFFchallengeResponse "+ch), from)
		case bytes.HasPrefix(p, []byte("\xFF\xFF\xFF\xFFconnect ")):
			if ch, ok := challenges[from]; ok && string(p[12:]) == ch {
				connected[from] = true
				g.c.WriteToUDPAddrPort([]byte("\xFF\xFF\xFF\xFFconnectResponse"), from)
			}
		case len(p) > 0 && p[0] != 0xFF && connected[from]:
			g.c.WriteToUDPAddrPort([]byte("game "+from.String()), from)
		}
	}
}

// gamePlayer is a real client of the game server through queryd's relay.
type gamePlayer struct {
	c      *net.UDPConn
	pub    netip.AddrPort
	mu     sync.Mutex
	seen   map[string]int // the address the game server saw it at, by game replies
	sent   atomic.Int64   // game packets sent
	got    atomic.Int64   // game replies
	joined time.Duration  // how long the handshake took
}

// newGamePlayer binds a socket to ip (in ns when set) that talks to pub.
func newGamePlayer(t testing.TB, ns, ip string, pub netip.AddrPort) *gamePlayer {
	t.Helper()
	var c *net.UDPConn
	err := inNS(ns, func() (err error) {
		c, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(ip)})
		return err
	})
	if err != nil {
		t.Fatalf("player socket on %s: %v", ip, err)
	}
	t.Cleanup(func() { c.Close() })
	return &gamePlayer{c: c, pub: pub, seen: map[string]int{}}
}

// join does getchallenge and connect (retrying, each step waiting 250 ms
// for its answer) and one game packet answered, within limit.
func (p *gamePlayer) join(limit time.Duration) error {
	start := time.Now()
	buf := make([]byte, 2048)
	const hdr = "\xFF\xFF\xFF\xFF"
	for deadline := start.Add(limit); time.Now().Before(deadline); {
		p.c.WriteToUDPAddrPort([]byte(hdr+"getchallenge"), p.pub)
		p.c.SetReadDeadline(time.Now().Add(250 * time.Millisecond))
		n, _, err := p.c.ReadFromUDPAddrPort(buf)
		if err != nil || !bytes.HasPrefix(buf[:n], []byte(hdr+"challengeResponse ")) {
			continue
		}
		p.c.WriteToUDPAddrPort(append([]byte(hdr+"connect "), buf[len(hdr+"challengeResponse "):n]...), p.pub)
		p.c.SetReadDeadline(time.Now().Add(250 * time.Millisecond))
		if n, _, err = p.c.ReadFromUDPAddrPort(buf); err != nil || string(buf[:n]) != hdr+"connectResponse" {
			continue
		}
		if p.play(3, 100*time.Millisecond) > 0 {
			p.joined = time.Since(start)
			return nil
		}
	}
	return fmt.Errorf("player %s did not join within %v", p.c.LocalAddr(), limit)
}

// play sends n game packets, one every tick, and returns how many were answered.
func (p *gamePlayer) play(n int, tick time.Duration) int {
	got := 0
	buf := make([]byte, 2048)
	for range n {
		sent := time.Now()
		p.c.WriteToUDPAddrPort([]byte("move"), p.pub)
		p.sent.Add(1)
		p.c.SetReadDeadline(sent.Add(tick))
		for {
			k, _, err := p.c.ReadFromUDPAddrPort(buf)
			if err != nil {
				break
			}
			if strings.HasPrefix(string(buf[:k]), "game ") {
				got++
				p.got.Add(1)
				p.mu.Lock()
				p.seen[string(buf[5:k])]++
				p.mu.Unlock()
				break
			}
		}
		time.Sleep(time.Until(sent.Add(tick)))
	}
	return got
}

// playUntil plays at 20 packets a second until stop is closed.
func (p *gamePlayer) playUntil(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		p.play(1, 50*time.Millisecond)
	}
}

// addresses is the set of addresses the game server saw the player at.
func (p *gamePlayer) addresses() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for a := range p.seen {
		out = append(out, a)
	}
	return out
}

// inNS runs fn in network namespace ns, or here when ns is "".
func inNS(ns string, fn func() error) error {
	if ns == "" {
		return fn()
	}
	return netnstest.Do(ns, fn)
}

// relayNS is a network namespace of the test's own with lo up and the
// test's IPv6 range fd00:5164:7864::/48 routed to lo as local (any of its
// addresses can be bound, ip_nonlocal_bind: sources from many /64s and
// /56s, without spoofing).
// It is removed when t ends; the test skips without root or ip(8).
func relayNS(t testing.TB) string {
	t.Helper()
	skipShort(t, "a network namespace")
	if os.Geteuid() != 0 {
		t.Skip("needs root (a network namespace): skipped")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip(8) (iproute2): skipped")
	}
	ns := fmt.Sprintf("qdr-%d-%d", os.Getpid()%100000, nsSeq.Add(1))
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	for _, args := range [][]string{
		{"netns", "add", ns},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "-6", "route", "add", "local", "fd00:5164:7864::/48", "dev", "lo"},
		{"netns", "exec", ns, "sysctl", "-qw", "net.ipv6.ip_nonlocal_bind=1"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return ns
}

var nsSeq atomic.Int32

// warmPorts sends relayPacket from each of srcs (real sockets, so not
// spoofed) in turn, each every period, until stop; it returns the count.
func warmPorts(t testing.TB, srcs []*net.UDPConn, pub netip.AddrPort, period time.Duration, stop <-chan struct{}) int {
	p := newPacer(float64(len(srcs)) / period.Seconds())
	for i := 0; ; i++ {
		select {
		case <-stop:
			return i
		default:
		}
		p.Wait(i)
		if _, err := srcs[i%len(srcs)].WriteToUDPAddrPort(relayPacket, pub); err != nil {
			t.Errorf("attacker send: %v", err)
			return i
		}
	}
}

// attackerSockets opens one socket per address in ips, ports sockets each
// (in ns), that discard what they get.
func attackerSockets(t testing.TB, ns string, ips []string, ports int) []*net.UDPConn {
	t.Helper()
	var out []*net.UDPConn
	err := inNS(ns, func() error {
		for _, ip := range ips {
			for range ports {
				c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(ip)})
				if err != nil {
					return err
				}
				out = append(out, c)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("attacker sockets: %v", err)
	}
	t.Cleanup(func() {
		for _, c := range out {
			c.Close()
		}
	})
	return out
}

package hostile

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/testkit"
)

// startOpenArena runs Debian's openarena-server (an ioquake3 server) on
// 127.0.0.1 until t ends, and returns its address once it answers
// getinfo. It skips the test where openarena-server is not installed.
func startOpenArena(t *testing.T) string {
	t.Helper()
	skipShort(t, "a real ioquake3 server")
	bin, err := exec.LookPath("openarena-server")
	if err != nil {
		if bin, err = exec.LookPath("/usr/games/openarena-server"); err != nil {
			t.Skip("openarena-server is not installed (apt-get install openarena-server): skipped")
		}
	}
	port := testkit.FreeUDPPort(t)
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin,
		"+set", "dedicated", "1", "+set", "net_enabled", "1", "+set", "net_ip", "127.0.0.1", "+set", "net_port", fmt.Sprint(port),
		"+set", "sv_maxclients", "12", "+set", "sv_master1", "", "+set", "com_homepath", home, "+map", "oa_dm1")
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.WaitDelay = 2 * time.Second
	out := &testkit.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	c, err := net.Dial("udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 4096)
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); {
		c.Write([]byte("\xFF\xFF\xFF\xFFgetinfo x"))
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if n, err := c.Read(buf); err == nil && bytes.Contains(buf[:n], []byte("infoResponse")) {
			return addr
		}
	}
	t.Fatalf("openarena-server did not answer getinfo within 90 s:\n%s", out)
	return ""
}

// askChallenge sends getchallenge from c to pub and reports whether a
// challengeResponse comes back within a second.
func askChallenge(c *net.UDPConn, pub netip.AddrPort) bool {
	c.WriteToUDPAddrPort([]byte("\xFF\xFF\xFF\xFFgetchallenge"), pub)
	buf := make([]byte, 2048)
	deadline := time.Now().Add(time.Second)
	for {
		c.SetReadDeadline(deadline)
		n, _, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return false
		}
		if bytes.HasPrefix(buf[:n], []byte("\xFF\xFF\xFF\xFFchallengeResponse")) {
			return true
		}
	}
}

// TestRelayOpenArenaPerClientLimits is §2 of the issue: with Debian's
// openarena-server behind the relay, an attacker sending 3 getchallenge a
// second from its own address (one relay session, far under every relay
// cap) left every other player 0/6 challenges, because ioquake3 limits
// getchallenge per source address (a burst of 10, then 1 a second) and
// every relayed datagram came from 127.0.0.1. With a loopback address per
// client the attacker only drains its own bucket: 6 players asking once
// each must get 6/6 (the issue measured 8/8 direct to the server). The
// feed's peer maps each session, at its own address, to its real client.
func TestRelayOpenArenaPerClientLimits(t *testing.T) {
	t.Parallel() // 3 getchallenge a second and a real server: it waits
	game := startOpenArena(t)
	d := StartDaemon(t, Tables{"relay": {"upstream": game}, "quake3": {"enabled": true}})
	pub := netip.MustParseAddrPort(d.UDPAddr)
	attacker, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 50)})
	if err != nil {
		t.Fatal(err)
	}
	defer attacker.Close()
	var asked, answered atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // 3 getchallenge a second, each waiting for its answer at most 1/3 s
		defer wg.Done()
		tick := time.NewTicker(time.Second / 3)
		defer tick.Stop()
		buf := make([]byte, 2048)
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			attacker.WriteToUDPAddrPort([]byte("\xFF\xFF\xFF\xFFgetchallenge"), pub)
			asked.Add(1)
			attacker.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			if n, _, err := attacker.ReadFromUDPAddrPort(buf); err == nil && bytes.Contains(buf[:n], []byte("challengeResponse")) {
				answered.Add(1)
			}
		}
	}()
	attackStart := time.Now()
	time.Sleep(5 * time.Second) // past the burst of 10
	got := 0
	var players []*net.UDPConn
	for i := range 6 {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, byte(60+i))})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		players = append(players, c)
		if askChallenge(c, pub) || askChallenge(c, pub) { // a real client asks again (ioquake3's every 3 s); before the fix both failed
			got++
		}
		time.Sleep(500 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	attackFor := time.Since(attackStart)
	t.Logf("attacker: %d getchallenge at 3/s from 127.0.0.50, %d answered (ioquake3 allows 1/s per address after 10); players: %d/6 challenges",
		asked.Load(), answered.Load(), got)
	if got != 6 {
		t.Errorf("players got %d of 6 challenges while one client sent 3 getchallenge a second; want 6 (before: 0/6)", got)
	}
	if a, most := answered.Load(), 10+int64(attackFor.Seconds())+2; a > most {
		t.Errorf("the attacker got %d of %d challenges in %v (at most %d: a burst of 10, then 1 a second): the game server's per-address limit did not apply to it",
			a, asked.Load(), attackFor.Round(time.Second), most)
	}
	fc := d.Feed(t)
	locals := map[string]bool{}
	// peer without addr answers only when no other session shares the port
	for _, c := range append(players, attacker) {
		rep, err := fc.Do(map[string]any{"op": "peer", "port": sessionPort(t, d, game, c)})
		if err != nil || !rep.OK || rep.Peer != c.LocalAddr().String() {
			t.Errorf("peer for %s: %+v, %v", c.LocalAddr(), rep, err)
			continue
		}
		local := netip.MustParseAddrPort(rep.Local)
		if local.Addr() == netip.MustParseAddr("127.0.0.1") || locals[local.Addr().String()] {
			t.Errorf("client %s reached the game server from %s: want a loopback address of its own", c.LocalAddr(), local)
		}
		locals[local.Addr().String()] = true
	}
	t.Logf("the game server saw the 7 clients at %d addresses of 127/8: %v", len(locals), strings.Join(keys(locals), " "))
}

// sessionPort finds the local port of c's relay session: of the UDP
// sockets connected to the game server (/proc/net/udp), the one the feed's
// peer maps to c.
func sessionPort(t *testing.T, d *Daemon, game string, c *net.UDPConn) int {
	t.Helper()
	fc := d.Feed(t)
	for _, local := range connectedTo(t, netip.MustParseAddrPort(game)) {
		rep, err := fc.Do(map[string]any{"op": "peer", "port": int(local.Port()), "addr": local.Addr().String()})
		if err == nil && rep.OK && rep.Peer == c.LocalAddr().String() {
			return int(local.Port())
		}
	}
	t.Fatalf("no relay session for %s", c.LocalAddr())
	return 0
}

// connectedTo lists the local addresses of this namespace's IPv4 UDP
// sockets connected to remote.
func connectedTo(t *testing.T, remote netip.AddrPort) []netip.AddrPort {
	t.Helper()
	b, err := os.ReadFile("/proc/net/udp")
	if err != nil {
		t.Skipf("cannot read /proc/net/udp: %v", err)
	}
	var out []netip.AddrPort
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		local, lok := procAddr(f[1])
		rem, rok := procAddr(f[2])
		if lok && rok && rem == remote {
			out = append(out, local)
		}
	}
	return out
}

// procAddr parses /proc/net/udp's "0100007F:1F90" (address in host order).
func procAddr(s string) (netip.AddrPort, bool) {
	var a uint32
	var port uint16
	if _, err := fmt.Sscanf(s, "%08X:%04X", &a, &port); err != nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{byte(a), byte(a >> 8), byte(a >> 16), byte(a >> 24)}), port), true
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

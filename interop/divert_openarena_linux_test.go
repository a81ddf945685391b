package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/netnstest"
)

// divertOA is OpenArena's address in the test network.
var divertOA = netip.AddrPortFrom(netnstest.ServerAddr4, 27960)

// startOpenArenaIn runs Debian's openarena-server (ioquake3) in namespace
// ns at at, no master, until t ends, and waits until it answers getinfo
// (asked from inside ns: not through the XDP interface). It skips the test
// where openarena-server is not installed.
func startOpenArenaIn(t *testing.T, ns string, at netip.AddrPort) {
	t.Helper()
	bin, err := exec.LookPath("openarena-server")
	if err != nil {
		if bin, err = exec.LookPath("/usr/games/openarena-server"); err != nil {
			t.Skip("openarena-server is not installed (apt-get install openarena-server): skipped")
		}
	}
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns, bin,
		"+set", "dedicated", "1", "+set", "net_enabled", "1", "+set", "net_ip", at.Addr().String(), "+set", "net_port", fmt.Sprint(at.Port()),
		"+set", "sv_hostname", "divert-oa", "+set", "sv_maxclients", "12", "+set", "sv_master1", "", "+set", "com_homepath", home, "+map", "oa_dm1")
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	err = netnstest.Do(ns, func() error {
		c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(at))
		if err != nil {
			return err
		}
		defer c.Close()
		buf := make([]byte, 4096)
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); {
			c.Write([]byte("\xFF\xFF\xFF\xFFgetinfo x"))
			c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			if n, err := c.Read(buf); err == nil && bytes.Contains(buf[:n], []byte("infoResponse")) {
				return nil
			}
		}
		return fmt.Errorf("openarena-server did not answer getinfo within 90 s")
	})
	if err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
}

// divertCounts are queryd_xdp_diverted_total's results.
type divertCounts struct{ xdp, socket, dropped, passed float64 }

func readDivert(t *testing.T, d *Daemon) divertCounts {
	t.Helper()
	m := func(r string) float64 {
		return d.Metric(t, fmt.Sprintf(`queryd_xdp_diverted_total{result=%q,server="main"}`, r))
	}
	return divertCounts{m("xdp"), m("socket"), m("dropped"), m("passed")}
}

// TestDivertOpenArena (issue 27): a real OpenArena server (Debian's
// openarena-server) on the server namespace's address, queryd diverting
// its port with [upstream] protocol = "quake3" (polled on the game
// server's own address from the same host). qstat and gamedig from the
// client's namespace get the server's state, answered by queryd (the
// divert counters grow by their queries and nothing of theirs is passed
// to the game server); getchallenge from the client reaches the game
// server, which answers the client's own address and port on a connected
// socket with the challenge.
func TestDivertOpenArena(t *testing.T) {
	clientCheck(t, "qstat_q3s", "divert")
	clientCheck(t, "gamedig_quake3", "divert")
	n := netnstest.New(t)
	startOpenArenaIn(t, n.ServerNS, divertOA)
	d := StartDaemon(t, divertOptions(n, divertOA, "quake3", map[string]map[string]any{
		"quake3": {"gamename": "Quake3Arena", "protocol": 71, "packet_burst": 100},
	}))
	addr := divertOA.String()
	leave := netnstest.Enter(t, n.ClientNS)
	defer leave()
	netnstest.CheckExec(t, n.ClientNS)
	NeedCommand(t, "quakestat")

	var s q3QstatServer
	before := readDivert(t, d)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(500 * time.Millisecond) { // the first poll
		r := RunCmd(t, 30*time.Second, "", "quakestat", "-q3s", addr, "-R", "-P", "-json", "-nnx")
		var servers []q3QstatServer
		if r.Err == nil && json.Unmarshal([]byte(r.Stdout), &servers) == nil && len(servers) == 1 && servers[0].Status == "online" && servers[0].Map == "oa_dm1" {
			s = servers[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("qstat did not get OpenArena's state through queryd: %v\n%s", r.Err, r.Stdout)
		}
		before = readDivert(t, d)
	}
	checkEq(t, "qstat name", s.Name, "divert-oa")
	checkEq(t, "qstat maxplayers", s.MaxPlayers, 12)
	t.Logf("qstat: %q on %s, %d/%d, gamename %q", s.Name, s.Map, s.NumPlayers, s.MaxPlayers, s.Rules["gamename"])

	r := RunGamedig(t, "quake3", addr, nil)
	if r.Err != nil {
		t.Fatalf("gamedig: %v", r.Err)
	}
	var g q3GamedigResult
	if err := json.Unmarshal([]byte(r.Stdout), &g); err != nil {
		t.Fatalf("gamedig output: %v\n%s", err, r.Stdout)
	}
	checkEq(t, "gamedig name", g.Name, "divert-oa")
	checkEq(t, "gamedig map", g.Map, "oa_dm1")
	checkEq(t, "gamedig maxplayers", g.MaxPlayers, "12")
	after := readDivert(t, d)
	answered := after.xdp + after.socket - before.xdp - before.socket
	t.Logf("qstat's and gamedig's queries: %v answered by the program, %v by the socket path, %v passed to the game server",
		after.xdp-before.xdp, after.socket-before.socket, after.passed-before.passed)
	if answered < 2 || after.passed != before.passed {
		t.Errorf("queryd answered %v of the clients' queries and passed %v to the game server: want at least 2 and none", answered, after.passed-before.passed)
	}

	// getchallenge: not a query; to the game server from the client's own
	// address and port (its answer comes back to the connected socket).
	c, err := net.DialUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netnstest.ClientAddr4, 0)), net.UDPAddrFromAddrPort(divertOA))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got string
	for i := 0; i < 3 && !strings.HasPrefix(got, "\xFF\xFF\xFF\xFFchallengeResponse"); i++ {
		c.Write([]byte("\xFF\xFF\xFF\xFFgetchallenge"))
		buf := make([]byte, 2048)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if m, err := c.Read(buf); err == nil {
			got = string(buf[:m])
		}
	}
	if !strings.HasPrefix(got, "\xFF\xFF\xFF\xFFchallengeResponse ") {
		t.Fatalf("getchallenge from %s: got %q, want OpenArena's challengeResponse", c.LocalAddr(), got)
	}
	if p := readDivert(t, d).passed - after.passed; p < 1 {
		t.Errorf("getchallenge: %v datagrams passed to the game server, want at least 1", p)
	}
	t.Logf("getchallenge from %s: %q (from OpenArena, to the client's own address)", c.LocalAddr(), got)
}

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/quake3"
)

// TestLiveIoquake3 puts a queryd in front of a real ioquake3 server
// (Debian's openarena-server, with 2 bots) where the machine has one: the
// front shows the server's hostname, map, slots and players in Quake 3 and
// in A2S. Skipped where openarena-server is not installed (CI does not
// install it: its data is hundreds of MB).
func TestLiveIoquake3(t *testing.T) {
	addr, out := startIoquake3(t)
	direct := waitStatus(t, addr, 60*time.Second, func(st *quake3.Status) bool { return len(st.Players) == 2 }, out)

	front := daemontest.Start(t, mods, fmt.Sprintf("[upstream]\nprotocol = \"quake3\"\naddress = %q\ninterval = \"500ms\"\n[quake3]\nprotocol = 71\n", addr))
	st := waitStatus(t, front.UDP().String(), 10*time.Second, func(st *quake3.Status) bool { return len(st.Players) == 2 }, nil)
	for _, k := range []string{"sv_hostname", "mapname", "sv_maxclients", "version", "g_gametype", "com_protocol", "bot_minplayers"} {
		if st.Info.Get(k) != direct.Info.Get(k) {
			t.Errorf("front %s = %q, the server's %q", k, st.Info.Get(k), direct.Info.Get(k))
		}
	}
	for i, p := range st.Players {
		if p.Ping != 0 {
			t.Errorf("front player %d %+v: ioquake3's bots have ping 0", i, p)
		}
	}
	c, err := a2s.Dial(front.UDP().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "^1queryd ^7live" || info.Map != "oa_dm1" || info.MaxPlayers != 12 || info.Players != 2 || info.Bots != 2 || info.Folder != "baseoa" {
		t.Errorf("front A2S_INFO %+v", info)
	}
	t.Logf("ioquake3 %s: %q on %s, %d players; the front's A2S: %q, %d/%d players (%d bots)",
		addr, direct.Info.Get("sv_hostname"), direct.Info.Get("mapname"), len(direct.Players), info.Name, info.Players, info.MaxPlayers, info.Bots)
}

// startIoquake3 starts Debian's openarena-server (ioquake3) on a free
// port of 127.0.0.1 with 2 bots, 12 slots and the hostname "^1queryd
// ^7live" on oa_dm1, for up to 2 minutes, and returns its address and
// output. The test is skipped where openarena-server is not installed (CI
// does not install it: its data is hundreds of MB) and under -short.
func startIoquake3(t *testing.T) (string, *lockedBuffer) {
	t.Helper()
	if testing.Short() {
		t.Skip("a real ioquake3 server: -short")
	}
	bin, err := exec.LookPath("openarena-server")
	if err != nil {
		if bin, err = exec.LookPath("/usr/games/openarena-server"); err != nil {
			t.Skip("openarena-server is not installed (apt-get install openarena-server): the live ioquake3 test is skipped")
		}
	}
	port := freeUDPPort(t)
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin,
		"+set", "dedicated", "1", "+set", "net_enabled", "1", "+set", "net_ip", "127.0.0.1", "+set", "net_port", fmt.Sprint(port),
		"+set", "sv_hostname", "^1queryd ^7live", "+set", "sv_maxclients", "12", "+set", "bot_minplayers", "2",
		"+set", "com_homepath", home, "+map", "oa_dm1")
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.WaitDelay = 2 * time.Second
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return fmt.Sprintf("127.0.0.1:%d", port), out
}

// waitStatus asks addr getstatus until ok says yes, for up to limit.
func waitStatus(t *testing.T, addr string, limit time.Duration, ok func(*quake3.Status) bool, log *lockedBuffer) *quake3.Status {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		c, err := quake3.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Timeout = 500 * time.Millisecond
		st, err := c.Status()
		c.Close()
		if err == nil && ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			if log != nil {
				t.Logf("server output:\n%s", log)
			}
			t.Fatalf("%s: no good getstatus answer within %s (last: %v)", addr, limit, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// freeUDPPort returns a UDP port of 127.0.0.1 that was free a moment ago.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// lockedBuffer keeps a process's output for the test to show.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

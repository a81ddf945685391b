package daemon_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon"
)

// TestFitHostDescriptors: the relay caps of a host's servers are held to
// equal shares of the descriptor limit, so that together they fit it
// (each server alone would have taken the whole budget).
func TestFitHostDescriptors(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	const n = 4
	if lim.Cur > n*2*65536 {
		t.Skipf("RLIMIT_NOFILE %d fits %d servers' 65,536 relay sessions: nothing to lower", lim.Cur, n)
	}
	h := &config.Host{}
	for i := 0; i < n; i++ {
		c, err := config.Parse([]byte("[listen]\nudp = [\"127.0.0.1:0\"]\n[relay]\nupstream = \"127.0.0.1:27016\"\nmax_sessions = 65536\n"))
		if err != nil {
			t.Fatal(err)
		}
		h.Servers = append(h.Servers, config.HostServer{Name: string(rune('a' + i)), Config: c})
	}
	whys, err := daemon.FitHostDescriptors(h)
	if err != nil {
		t.Fatal(err)
	}
	if len(whys) != n {
		t.Fatalf("%d servers lowered, want %d: %q", len(whys), n, whys)
	}
	// The reason names the process's limit, not only the share (a share
	// read as the limit sent operators to raise a limit that was fine).
	if want := fmt.Sprintf("RLIMIT_NOFILE is %d, this server's share of it (one of %d servers) ", lim.Cur, n); !strings.HasPrefix(whys[0], "server a: "+want) {
		t.Errorf("reason %q, want it to start with %q", whys[0], want)
	}
	total := 0
	for _, s := range h.Servers {
		total += s.Config.Relay.MaxSessions + s.Config.Feed.MaxConns
	}
	if total >= int(lim.Cur) {
		t.Errorf("the servers' caps add up to %d, not below RLIMIT_NOFILE %d", total, lim.Cur)
	}
	t.Logf("RLIMIT_NOFILE %d: %d servers' relay caps %d each (%d with the feeds')", lim.Cur, n, h.Servers[0].Config.Relay.MaxSessions, total)
}

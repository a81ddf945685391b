package daemon_test

import (
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
	total := 0
	for _, s := range h.Servers {
		total += s.Config.Relay.MaxSessions + s.Config.Feed.MaxConns
	}
	if total >= int(lim.Cur) {
		t.Errorf("the servers' caps add up to %d, not below RLIMIT_NOFILE %d", total, lim.Cur)
	}
	t.Logf("RLIMIT_NOFILE %d: %d servers' relay caps %d each (%d with the feeds')", lim.Cur, n, h.Servers[0].Config.Relay.MaxSessions, total)
}

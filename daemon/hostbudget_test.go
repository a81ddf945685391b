package daemon_test

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/responder"
)

// echoReply is the echo module's answer to the test configs' [server]
// name: 16 bytes.
const echoReply = "name=config name"

// askMany sends n ECHO datagrams from c to each of dsts in turn and
// returns the answers that came back within wait of the last one.
func askMany(t *testing.T, c *net.UDPConn, dsts []netip.AddrPort, n int, wait time.Duration) int {
	t.Helper()
	for _, dst := range dsts {
		for i := 0; i < n; i++ {
			if _, err := c.WriteToUDPAddrPort([]byte("ECHO"), dst); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := 0
	buf := make([]byte, 512)
	for {
		c.SetReadDeadline(time.Now().Add(wait))
		m, err := c.Read(buf)
		if err != nil {
			return got
		}
		if string(buf[:m]) != echoReply {
			t.Fatalf("answer %q, want %q", buf[:m], echoReply)
		}
		got++
	}
}

// hostRefused sums queryd_requests_total{outcome="host_rate_limited"}
// over every server.
func hostRefused(t *testing.T, d *daemontest.Daemon) float64 {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != responder.MetricRequests {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == "host_rate_limited" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// TestHostBudgetShared: the two servers of a host draw on one host-wide
// per-IP budget ([host]): one address asking both gets the host's burst
// (1,500 B: 93 answers of 16 B) in all, not each server's own (64 KiB:
// all 160); the rest is counted host_rate_limited. A SIGHUP that changes
// [host] applies it at once (a fresh budget); one that changes nothing
// keeps the sources' state.
func TestHostBudgetShared(t *testing.T) {
	dir := daemontest.Dir(t)
	if err := os.Mkdir(filepath.Join(dir, "s"), 0o700); err != nil {
		t.Fatal(err)
	}
	host := "[servers]\ninclude = [\"s/*.toml\"]\n[host]\nper_ip_rate = 1\nper_ip_burst = 1500\n"
	main := daemontest.WriteConfig(t, dir, host)
	server := "[listen]\nudp = [\"127.0.0.1:0\"]\nworkers = 1\n[feed]\nsocket = \"" + filepath.Join(dir, "a.sock") + "\"\n[server]\nname = \"config name\"\n"
	if err := os.WriteFile(filepath.Join(dir, "s", "a.toml"), []byte(server), 0o600); err != nil {
		t.Fatal(err)
	}
	d := daemontest.StartHost(t, mods(echoModule{}), main)
	t.Cleanup(func() { d.Stop() })
	a := d.Server("a")
	if a == nil {
		t.Fatalf("servers %v: want main and a", d.ServerNames())
	}
	dsts := []netip.AddrPort{d.UDP(), a.UDPAddrs()[0]}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	if got := askMany(t, c, dsts, 80, 500*time.Millisecond); got != 1500/len(echoReply) {
		t.Errorf("one address asking 2 servers 80 times each got %d answers of %d B; want %d (the host's burst of 1,500 B)", got, len(echoReply), 1500/len(echoReply))
	}
	if got := hostRefused(t, d); got != float64(160-1500/len(echoReply)) {
		t.Errorf("%v counted host_rate_limited, want %d", got, 160-1500/len(echoReply))
	}

	d.Reload() // nothing changed: the budget and its state kept
	if got := askMany(t, c, dsts[:1], 10, 300*time.Millisecond); got != 0 {
		t.Errorf("after a SIGHUP that changed nothing, %d answers: the host-wide budget was refilled", got)
	}
	if err := os.WriteFile(main, []byte(daemontest.Base(dir)+"[servers]\ninclude = [\"s/*.toml\"]\n[host]\nper_ip_rate = 1\nper_ip_burst = 3000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.Reload()
	if got := askMany(t, c, dsts, 100, 500*time.Millisecond); got != 3000/len(echoReply) {
		t.Errorf("after a SIGHUP to a burst of 3,000 B: %d answers, want %d", got, 3000/len(echoReply))
	}
}

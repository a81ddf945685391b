package hostile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/queryd/queryd/internal/testkit"
)

// The budgets of TestHostBudgetOneVictim: each server's per-IP budget,
// and the host-wide one, twice a server's (of 16 servers).
const (
	hbServers     = 16
	hbPerIPRate   = 8192
	hbPerIPBurst  = 2048
	hbHostRate    = 2 * hbPerIPRate
	hbHostBurst   = 2 * hbPerIPBurst
	hbPerServerHz = 100 // getstatus per second to each server
	hbFlood       = 2 * time.Second
)

// TestHostBudgetOneVictim (issue 39, item 9): a host of 16 servers, one
// victim address (on loopback; spoofed or not, queryd cannot tell) asking
// every one of them for Quake 3 getstatus, each server's per-IP budget
// pressed (100 requests a second each, 185-byte replies, 8 KiB/s per
// server). What the victim is sent is capped by [host] per_ip_rate (16
// KiB/s, burst 4 KiB), not by 16 × per_ip_rate (128 KiB/s): before the
// host-wide budget it drew every server's allowance.
func TestHostBudgetOneVictim(t *testing.T) {
	skipShort(t, "a 2-second flood at a host of 16 servers")
	d := newDaemon(t, Tables{
		"listen":  {"workers": 1},
		"limits":  hbLimits(),
		"quake3":  {"packet_rate": 0}, // the byte budgets alone
		"servers": {"include": []string{"servers.d/*.toml"}},
		"host":    {"per_ip_rate": hbHostRate, "per_ip_burst": hbHostBurst},
	})
	addrs := []string{d.UDPAddr}
	dir := filepath.Join(d.Dir, "servers.d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < hbServers; i++ {
		addr := testkit.FreeUDPAddr(t)
		addrs = append(addrs, addr)
		writeServerFile(t, filepath.Join(dir, fmt.Sprintf("s%02d.toml", i)), Tables{
			"listen": {"udp": []string{addr}, "workers": 1},
			"feed":   {"socket": filepath.Join(d.Dir, fmt.Sprintf("s%02d.sock", i)), "stale_after": "60s"},
			"limits": hbLimits(),
			"server": baseServer(),
			"quake3": {"enabled": true, "packet_rate": 0},
		})
	}
	d.Start(t)

	// The victim: one address, a socket per server (the per-IP budgets
	// key on the address alone, not the port).
	victim := sourceIP(39, 9)
	var socks []*Source
	for _, a := range addrs {
		socks = append(socks, NewSource(t, victim, a))
	}
	req := []byte("\xFF\xFF\xFF\xFFgetstatus")
	reply := maxReply(d, t, req)
	before := d.Metrics(t)
	start := time.Now()
	flood(t, socks, req, hbPerServerHz*hbServers, hbFlood)
	waitQuiet(socks, 300*time.Millisecond, 3*time.Second)
	var got, last int64
	for _, s := range socks {
		got += s.recv.Load()
		last = max(last, s.lastRecv.Load())
	}
	window := time.Unix(0, last).Sub(start).Seconds()
	delta := d.Metrics(t).Sub(before)
	sentBytes := delta.Sum("queryd_sent_bytes_total", "protocol", "quake3")
	outcomes := delta.Requests("quake3")

	// Allowed: the host's burst and rate over the window, plus one reply
	// per server of slack for the clock each receive batch reads.
	hostCap := hbHostBurst + hbHostRate*window + float64(reply*hbServers)
	servers := float64(hbServers) * (hbPerIPBurst + hbPerIPRate*window)
	t.Logf("one victim, %d servers, %d getstatus in %.2f s: %d B received (%.0f B/s), %.0f B sent by the daemon; host cap %.0f B, %d servers' per-IP caps %.0f B; outcomes %v",
		hbServers, socks[0].sentN.Load()*int64(len(socks)), window, got, float64(got)/window, sentBytes, hostCap, hbServers, servers, outcomes)
	if float64(got) > hostCap {
		t.Errorf("the victim got %d B in %.2f s: over the host-wide cap %.0f B ([host] per_ip_rate %d B/s, burst %d B); %d servers' per-IP budgets would allow %.0f B",
			got, window, hostCap, hbHostRate, hbHostBurst, hbServers, servers)
	}
	if float64(got) < 0.6*(hbHostBurst+hbHostRate*window) {
		t.Errorf("the victim got %d B: under 60 %% of the host-wide cap: the flood did not press on it", got)
	}
	if outcomes["host_rate_limited"] == 0 {
		t.Errorf("no getstatus counted host_rate_limited: %v", outcomes)
	}
}

// hbLimits is each server's [limits] in TestHostBudgetOneVictim.
func hbLimits() map[string]any {
	return map[string]any{"per_ip_rate": hbPerIPRate, "per_ip_burst": hbPerIPBurst, "unproven_rate": "1MiB", "unproven_burst": "64KiB"}
}

// writeServerFile writes a host's server file of tables.
func writeServerFile(t testing.TB, path string, tables Tables) {
	t.Helper()
	doc := map[string]any{}
	for name, keys := range tables {
		doc[name] = keys
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		t.Fatalf("encoding %s: %v", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

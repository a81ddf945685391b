package hostile

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/netnstest"
)

// The budgets of TestXDPHostBudgetSplit: each server's [limits], far
// above the host-wide budget, which is what holds the victim.
const (
	xhServers   = 8
	xhPerIPRate = 8192
	xhPerIPBurs = 8192
	xhHostRate  = 8192 // [host] before the SIGHUP
	xhHostBurst = 8192
	xhHostRate2 = 2048 // and after it
	xhHostBurs2 = 4096
	xhFlood     = 1500 * time.Millisecond
)

// TestXDPHostBudgetSplit (issue 39, item 9, the XDP side): a host of eight
// servers with the fast path attached; one spoofed victim address asks
// every server for Quake 3 getstatus, half plain (the program answers
// them) and half with a challenge argument (the socket path does). What
// the victim receives over both paths together stays within [host]: the
// daemon hands each path half of it, as it does of each server's [limits]
// (before, the program drew only on each server's budget, and the victim
// received every server's share of it on top of the socket path's
// host-wide budget). A SIGHUP that lowers [host] lowers both halves: the
// program's too.
func TestXDPHostBudgetSplit(t *testing.T) {
	t.Parallel() // namespaces of its own; it mostly waits for the budgets to refill
	skipShort(t, "floods at a host of eight servers in a test network")
	over := Tables{
		"listen":  {"workers": testWorkers},
		"limits":  xhLimits(),
		"quake3":  {"packet_rate": 0},
		"servers": {"include": []string{"servers.d/*.toml"}},
		"host":    {"per_ip_rate": xhHostRate, "per_ip_burst": xhHostBurst},
	}
	var dsts []netip.AddrPort
	x := startXDPDaemonWith(t, over, func(d *Daemon, n *netnstest.Net) {
		dir := filepath.Join(d.Dir, "servers.d")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		dsts = append(dsts, netip.AddrPortFrom(netnstest.ServerAddr4, xdpPort))
		for i := 1; i < xhServers; i++ {
			at := netip.AddrPortFrom(netnstest.ServerAddr4, uint16(xdpPort+i))
			dsts = append(dsts, at)
			writeServerFile(t, filepath.Join(dir, fmt.Sprintf("s%02d.toml", i)), Tables{
				"listen": {"udp": []string{at.String()}, "workers": testWorkers},
				"feed":   {"socket": filepath.Join(d.Dir, fmt.Sprintf("s%02d.sock", i)), "stale_after": "60s"},
				"limits": xhLimits(),
				"server": baseServer(),
				"quake3": {"enabled": true, "packet_rate": 0},
			})
		}
	})
	var senders []*rawSender
	err := netnstest.Do(x.net.ClientNS, func() error {
		for _, dst := range dsts {
			r, err := newNetRawSender(dst)
			if err != nil {
				return err
			}
			senders = append(senders, r)
		}
		return nil
	})
	for _, r := range senders {
		defer r.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	var capture *replyCapture
	err = netnstest.Do(x.net.ClientNS, func() (err error) {
		capture, err = newReplyCapture(x.net.ClientIf, netip.AddrPortFrom(netnstest.ServerAddr4, 0))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer capture.Close()

	for round, host := range []struct{ rate, burst float64 }{{xhHostRate, xhHostBurst}, {xhHostRate2, xhHostBurs2}} {
		if round == 1 {
			over["host"] = map[string]any{"per_ip_rate": xhHostRate2, "per_ip_burst": xhHostBurs2}
			x.WriteConfig(t, baseTables(), over)
			changed := strings.Count(x.Output(), "host-wide per-IP budget changed")
			x.Signal(t, syscall.SIGHUP)
			if !waitFor(3*time.Second, func() bool { return strings.Count(x.Output(), "host-wide per-IP budget changed") > changed }) {
				t.Fatalf("SIGHUP lowering [host]: not applied within 3 s:\n%s", x.Output())
			}
			time.Sleep(1500 * time.Millisecond) // the program's next sync; the servers' buckets fill again
		}
		victim := spoofed(t, 100+round, 1)[0]
		before := x.Metrics(t)
		start := xhFloodAll(t, senders, victim, 3000, xhFlood)
		capture.waitQuiet(300*time.Millisecond, 3*time.Second)
		got, _ := capture.sum([]netip.AddrPort{victim})
		delta := x.Metrics(t).Sub(before)
		window := time.Unix(0, got.last).Sub(start).Seconds()
		slack := 2 * float64(got.largest) // a reply on each path
		hostCap := host.burst + host.rate*window + slack
		servers := 2 * xhServers * (xhPerIPBurs/2 + xhPerIPRate/2*window)
		prog := delta.Sum("queryd_xdp_requests_total", "protocol", "quake3", "outcome", "answered")
		all := delta.Requests("quake3")["answered"]
		t.Logf("[host] %v B/s, burst %v B: the victim received %d B in %d datagrams over %.2f s (host cap %.0f B; the servers' per-IP budgets over both paths %.0f B); answered %v by the program, %v by the socket path; outcomes %v",
			host.rate, host.burst, got.bytes, got.n, window, hostCap, servers, prog, all-prog, delta.Requests("quake3"))
		if prog == 0 || all-prog == 0 {
			t.Fatalf("answered %v by the program and %v by the socket path: the flood must reach both", prog, all-prog)
		}
		if float64(got.bytes) > hostCap {
			t.Errorf("[host] %v B/s, burst %v B: the victim received %d B over both paths; the host-wide cap allows %.0f", host.rate, host.burst, got.bytes, hostCap)
		}
		if float64(got.bytes) < 0.5*(host.burst+host.rate*window) {
			t.Errorf("the victim received %d B: under half the host-wide cap: the flood did not press on it", got.bytes)
		}
	}
}

// xhLimits is each server's [limits] in TestXDPHostBudgetSplit.
func xhLimits() map[string]any {
	return map[string]any{"per_ip_rate": xhPerIPRate, "per_ip_burst": xhPerIPBurs, "unproven_rate": "1MiB", "unproven_burst": "64KiB"}
}

// xhFloodAll sends getstatus from victim to each server in turn, plain
// and with a challenge argument alternately, at rate datagrams per second
// for d; the source port changes every round. It returns when it began.
func xhFloodAll(t *testing.T, senders []*rawSender, victim netip.AddrPort, rate float64, d time.Duration) time.Time {
	t.Helper()
	reqs := [][]byte{[]byte("\xFF\xFF\xFF\xFFgetstatus"), []byte("\xFF\xFF\xFF\xFFgetstatus abcdefgh")}
	p := newPacer(rate)
	n := int(rate * d.Seconds())
	for i := 0; i < n; i++ {
		p.Wait(i)
		j := i / len(senders)
		src := netip.AddrPortFrom(victim.Addr(), victim.Port()+uint16(j%64))
		if err := senders[i%len(senders)].Send(src, reqs[j%2]); err != nil {
			t.Fatalf("flood send: %v", err)
		}
	}
	return p.start
}

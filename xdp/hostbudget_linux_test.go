//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/responder"
)

// TestXDPHostBudget: one program answers six servers of a host; one
// address (the victim's: whoever spoofs it gets its tokens' worth) asks
// every server as fast as it may for 1.5 s. Without the host-wide budget
// it receives each server's per-IP budget, six times one; with it
// (SetHostLimits on the running program, as a SIGHUP of [host] sets it),
// at most the host-wide budget's burst and rate over the time, whatever
// the servers allow each.
func TestXDPHostBudget(t *testing.T) {
	needXDP(t)
	n := newTestNet(t)
	issuer, err := challenge.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	const servers = 6
	lim := responder.Limits{PerIPRate: 2000, PerIPBurst: 2000, UnprovenRate: 1 << 20, UnprovenBurst: 1 << 20, TrackedIPs: 1024}
	host := responder.HostLimits{PerIPRate: 2000, PerIPBurst: 2000, TrackedIPs: 1024}
	reg := prometheus.NewRegistry()
	var hs []*hostServer
	var ss []Server
	for i := range servers {
		h := newHostServer(t, n, issuer, fmt.Sprintf("s%d", i), uint16(27201+i), lim)
		hs = append(hs, h)
		ss = append(ss, h.xdpServer(reg))
	}
	var f *FastPath
	err = inNS(n.srvNS, func() (err error) {
		f, err = New(Config{Interfaces: []string{n.srvIf}, Mode: ModeNative, Issuer: issuer, Registry: reg, Servers: ss})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(hs))
	for i, h := range hs {
		f.SetProtocols(h.name, h.protos)
		names[i] = h.name
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitServers(t, f, names...)
	c := dialHost(t, n)
	tok := c.token(t, hs[0].port)
	req := a2sWithToken('T', tok)

	without, took := victimBytes(t, c, hs, req, 1500*time.Millisecond)
	perServer := float64(lim.PerIPBurst) + float64(lim.PerIPRate)*took.Seconds()
	t.Logf("without the host-wide budget: %d bytes in %v (each server's cap %.0f)", without, took.Round(time.Millisecond), perServer)

	if err := f.SetHostLimits(host); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the next sync writes it; the servers' buckets fill again (burst ÷ rate: 1 s)
	with, took := victimBytes(t, c, hs, req, 1500*time.Millisecond)
	hostCap := float64(host.PerIPBurst) + float64(host.PerIPRate)*took.Seconds()
	t.Logf("with the host-wide budget: %d bytes in %v (its cap %.0f)", with, took.Round(time.Millisecond), hostCap)
	if float64(with) > hostCap {
		t.Errorf("with the host-wide budget the victim received %d bytes, above its cap of %.0f", with, hostCap)
	}
	if float64(without) < 2*hostCap {
		t.Errorf("without the host-wide budget the victim received only %d bytes: the load did not show the servers' budgets (cap %.0f each)", without, perServer)
	}
	if with == 0 {
		t.Error("with the host-wide budget nothing was answered")
	}
}

// victimBytes sends req to every server in turn, one each 2 ms, for d,
// and returns the reply bytes (UDP payloads) the client received and the
// time from the first request to the last reply: the budgets admitted
// them all within it. The program's clock is the coarse one (a tick, at
// most 10 ms, late): the caps allow the rate over one tick more.
func victimBytes(t *testing.T, c *hostClient, hs []*hostServer, req []byte, d time.Duration) (int, time.Duration) {
	t.Helper()
	type result struct {
		n    int
		last time.Time
	}
	got := make(chan result, 1)
	start := time.Now()
	stop := start.Add(d)
	go func() {
		var r result
		buf := make([]byte, 65536)
		for {
			c.c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			n, _, err := c.c.ReadFromUDPAddrPort(buf)
			if err != nil {
				if time.Now().After(stop) {
					got <- r
					return
				}
				continue
			}
			r.n += n
			r.last = time.Now()
		}
	}()
	for i := 0; time.Now().Before(stop); i++ {
		h := hs[i%len(hs)]
		if _, err := c.c.WriteToUDPAddrPort(req, netip.AddrPortFrom(srvAddr4, h.port)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	r := <-got
	if r.n == 0 {
		return 0, d
	}
	return r.n, r.last.Sub(start) + 10*time.Millisecond
}

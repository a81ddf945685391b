package hostile

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
)

// provenFloodFor and provenFloodMax bound each run of TestProvenTierFlood:
// a spoofed flood at the raw socket's own pace, for at most this long and
// this many datagrams.
const (
	provenFloodFor = 2 * time.Second
	provenFloodMax = 600_000
)

// provenRun is one run's figures.
type provenRun struct {
	sent, shed, overflow, challenged float64
	tries, ok                        int64
	newcomer                         int // of newcomerTries requests from a new source during the flood, those answered
	rate                             float64
}

// TestProvenTierFlood (issue 43, "Proven sources first"): a spoofed
// tokenless A2S_INFO flood from 50,000 127.x sources at the raw socket's
// own pace against the daemon's socket path, while a proven client
// (127.0.0.1: it returned a token before the flood) asks A2S_INFO 100 times
// a second, each a challenge and the query with its token, as real A2S
// clients do. With the tier ([limits] unproven_packet_rate = 1000) the
// flood past the gate is shed before any reply work and the proven client
// keeps at least 90 % of its answers while a new source gets almost
// nothing (the gate's 1,000/s go to whichever unproven requests come
// first: at most 5 of its 20); the same flood with the tier off (0) is the
// comparison (logged).
func TestProvenTierFlood(t *testing.T) {
	if why := rawSupported(); why != "" {
		t.Skip("skipped: " + why)
	}
	on := provenFlood(t, 1000)
	off := provenFlood(t, 0)
	for _, r := range []struct {
		name string
		provenRun
	}{{"tier on (1,000/s)", on}, {"tier off", off}} {
		t.Logf("%s: flood %.0f datagrams (%.0f/s), shed %.0f, challenged %.0f, kernel overflow drops %.0f; proven client %d of %d answered (%.1f %%); new source %d of %d answered",
			r.name, r.sent, r.rate, r.shed, r.challenged, r.overflow, r.ok, r.tries, 100*float64(r.ok)/float64(max(r.tries, 1)), r.newcomer, newcomerTries)
	}
	if on.tries < 50 || float64(on.ok) < 0.9*float64(on.tries) {
		t.Errorf("tier on: the proven client got %d of %d answered, want at least 90 %%", on.ok, on.tries)
	}
	if on.newcomer > 5 {
		t.Errorf("tier on: a new source got %d of %d answered during the flood", on.newcomer, newcomerTries)
	}
	if on.shed < 0.5*on.sent {
		t.Errorf("tier on: %.0f of %.0f flood datagrams shed", on.shed, on.sent)
	}
	if off.shed != 0 {
		t.Errorf("tier off: %.0f shed", off.shed)
	}
}

// provenFlood runs the flood against a daemon with unproven_packet_rate
// rate (burst a tenth of it).
func provenFlood(t *testing.T, rate int) provenRun {
	d := StartDaemon(t, Tables{"listen": {"workers": testWorkers},
		"limits": {"unproven_packet_rate": rate, "unproven_packet_burst": max(rate/10, 1)}})
	dst := netip.MustParseAddrPort(d.UDPAddr)
	raw, err := newRawSender(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	legitQuery(t, d) // proves 127.0.0.1
	before := d.Metrics(t)
	var r provenRun
	var tries, ok atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		challengeAndAsk(d, stop, &tries, &ok)
	}()
	go func() {
		defer wg.Done()
		time.Sleep(provenFloodFor / 4)
		r.newcomer = newcomerAnswered(t, dst)
	}()
	req := a2sReq('T', []byte("Source Engine Query\x00"))
	start := time.Now()
	i := 0
	for ; i < provenFloodMax && time.Since(start) < provenFloodFor; i++ {
		src := netip.AddrPortFrom(netip.MustParseAddr(sourceIP(40, i%50000)), uint16(1024+i%50000))
		if err := raw.Send(src, req); err != nil {
			t.Fatal(err)
		}
	}
	r.rate = float64(i) / time.Since(start).Seconds()
	close(stop)
	wg.Wait()
	time.Sleep(200 * time.Millisecond) // the daemon drains its sockets
	delta := d.Metrics(t).Sub(before)
	r.sent = float64(i)
	r.shed = delta.Sum("queryd_requests_total", "outcome", "unproven_shed")
	r.challenged = delta.Sum("queryd_requests_total", "outcome", "challenged")
	r.overflow = delta.Sum("queryd_socket_errors_total", "op", "overflow")
	r.tries, r.ok = tries.Load(), ok.Load()
	return r
}

// challengeAndAsk asks A2S_INFO from 127.0.0.1 every 10 ms until stop, each
// time as a new client (a new socket, a challenge first), with a 500 ms
// timeout and no retry.
func challengeAndAsk(d *Daemon, stop chan struct{}, tries, ok *atomic.Int64) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		tries.Add(1)
		c, err := a2s.Dial(d.UDPAddr)
		if err != nil {
			continue
		}
		c.Timeout = 500 * time.Millisecond
		if _, err := c.Info(); err == nil {
			ok.Add(1)
		}
		c.Close()
	}
}

// newcomerTries is how many A2S_INFO requests the new source sends.
const newcomerTries = 20

// newcomerAnswered sends newcomerTries A2S_INFO requests from a source
// never seen (127.0.0.99), 20 ms apart, and returns how many were
// answered.
func newcomerAnswered(t *testing.T, dst netip.AddrPort) int {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 99)})
	if err != nil {
		t.Errorf("newcomer: %v", err)
		return 0
	}
	defer c.Close()
	n := 0
	buf := make([]byte, 2048)
	for range newcomerTries {
		if _, err := c.WriteToUDPAddrPort(a2sReq('T', []byte("Source Engine Query\x00")), dst); err != nil {
			t.Errorf("newcomer: %v", err)
			return n
		}
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, _, err := c.ReadFromUDPAddrPort(buf); err == nil {
			n++
		}
	}
	return n
}

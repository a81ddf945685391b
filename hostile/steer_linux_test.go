package hostile

import (
	"bytes"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// steerFlood is the flood of TestSteerProvenFlood: unpaced spoofed A2S_INFO
// requests from this many 127.x sources (16 /16s), for this long, at most
// this many datagrams, from this many raw sockets, against sockets whose
// queues hold about a hundred of them.
const (
	steerFloodSources = 1 << 20
	steerFloodTime    = 3 * time.Second
	steerFloodMax     = 3_000_000
	steerFloodSenders = 2
	steerRecvBuffer   = 64 << 10
)

// TestSteerProvenFlood floods the daemon's sockets (a small recv_buffer;
// unpaced spoofed A2S_INFO, each datagram from a new source of 1,048,576:
// the kernel drops at their full queues) while a proven client (it answered a challenge before the
// flood) sends 100 A2S_INFO queries a second with its token, with [listen]
// steer_proven on and off. With steering its queries reach sockets of their
// own, which the flood never fills: at least 99 % are answered.
func TestSteerProvenFlood(t *testing.T) {
	skipShort(t, "a 2×3 s flood")
	if why := rawSupported(); why != "" {
		t.Skip("steer flood skipped: " + why)
	}
	on := steerFlood(t, true)
	off := steerFlood(t, false)
	t.Logf("proven client answered: %.1f %% with steer_proven, %.1f %% without", 100*on, 100*off)
	if on < 0.99 {
		t.Errorf("with steer_proven the proven client got %.1f %% answered; want ≥ 99 %%", 100*on)
	}
}

// steerFlood runs the flood against a daemon with steer_proven set to
// steer and returns the proven client's answered share.
func steerFlood(t *testing.T, steer bool) float64 {
	d := StartDaemon(t, Tables{"listen": {"workers": testWorkers, "recv_buffer": steerRecvBuffer, "steer_proven": steer}})
	if got := strings.Contains(d.Output(), "proven sources get sockets of their own"); got != steer {
		t.Fatalf("steer_proven = %v, but the log says otherwise:\n%s", steer, d.Output())
	}
	pc := newProvenClient(t, d.UDPAddr)
	defer pc.conn.Close()

	before := d.Metrics(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pc.run(stop)
	}()
	start := time.Now()
	sent := steerFloodSend(t, netip.MustParseAddrPort(d.UDPAddr))
	floodTime := time.Since(start)
	close(stop)
	wg.Wait()
	delta := d.Metrics(t).Sub(before)
	share := float64(pc.answered.Load()) / float64(pc.sent.Load())
	t.Logf("steer_proven = %v: flood %d datagrams in %v (%.0f/s), kernel overflow drops %.0f, a2s outcomes %v; proven client %d of %d answered (%.1f %%)",
		steer, sent, floodTime.Round(time.Millisecond), float64(sent)/floodTime.Seconds(), delta.Sum("queryd_socket_errors_total", "op", "overflow"),
		delta.Requests("a2s"), pc.answered.Load(), pc.sent.Load(), 100*share)
	if steer {
		t.Logf("queryd_steered_total: proven %.0f, ordinary %.0f", delta.Sum("queryd_steered_total", "to", "proven"), delta.Sum("queryd_steered_total", "to", "ordinary"))
		if got, sent := delta.Sum("queryd_steered_total", "to", "proven"), float64(pc.sent.Load()); got < sent {
			t.Errorf("queryd_steered_total{to=\"proven\"} grew by %.0f; the proven client sent %.0f", got, sent)
		}
	}
	if delta.Sum("queryd_socket_errors_total", "op", "overflow") == 0 {
		t.Errorf("steer_proven = %v: the flood never filled a socket queue: nothing was measured", steer)
	}
	return share
}

// steerFloodSend sends the flood to dst from steerFloodSenders raw
// sockets, each unpaced, for steerFloodTime or steerFloodMax datagrams in
// all, and returns how many it sent.
func steerFloodSend(t *testing.T, dst netip.AddrPort) int {
	req := a2sReq('T', []byte("Source Engine Query\x00"))
	start := time.Now()
	var sent atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < steerFloodSenders; g++ {
		raw, err := newRawSender(dst)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < steerFloodMax/steerFloodSenders*steerFloodSenders && time.Since(start) < steerFloodTime; i += steerFloodSenders {
				j := i * 0x9E3779B1 & (steerFloodSources - 1) // odd: a permutation, each datagram a new source
				src := netip.AddrPortFrom(netip.MustParseAddr(sourceIP(40+j>>16, j&0xffff)), uint16(1024+i%60000))
				if err := raw.Send(src, req); err != nil {
					t.Errorf("after %d datagrams: %v", i, err)
					return
				}
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(sent.Load())
}

// provenClient is one A2S client that has proven its address: it sends
// A2S_INFO with its token from one socket and counts the answers.
type provenClient struct {
	conn           *net.UDPConn
	token          atomic.Value // []byte: the last challenge
	sent, answered atomic.Int64
}

// newProvenClient dials addr and proves the client's address: a challenge,
// then an answered query with its token.
func newProvenClient(t *testing.T, addr string) *provenClient {
	t.Helper()
	ua, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp4", nil, ua)
	if err != nil {
		t.Fatal(err)
	}
	pc := &provenClient{conn: c}
	pc.token.Store([]byte{0xFF, 0xFF, 0xFF, 0xFF})
	buf := make([]byte, 2048)
	for i := 0; i < 2; i++ {
		c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write(pc.query()); err != nil {
			t.Fatal(err)
		}
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("proving the client: %v", err)
		}
		if pc.take(buf[:n]) && i == 1 {
			c.SetDeadline(time.Time{})
			return pc
		}
	}
	t.Fatal("proving the client: no answer to its token")
	return nil
}

// query is A2S_INFO with the client's token.
func (pc *provenClient) query() []byte {
	return a2sReq('T', []byte("Source Engine Query\x00"), pc.token.Load().([]byte))
}

// take reads one reply: a challenge updates the token; it reports an answer.
func (pc *provenClient) take(p []byte) bool {
	switch {
	case len(p) == 9 && bytes.HasPrefix(p, []byte{0xFF, 0xFF, 0xFF, 0xFF, 'A'}):
		pc.token.Store(bytes.Clone(p[5:9]))
	case len(p) > 5 && bytes.HasPrefix(p, []byte{0xFF, 0xFF, 0xFF, 0xFF, 'I'}):
		return true
	}
	return false
}

// run sends 100 queries a second until stop, counting the answers.
func (pc *provenClient) run(stop chan struct{}) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			n, err := pc.conn.Read(buf)
			if err != nil {
				return
			}
			if pc.take(buf[:n]) {
				pc.answered.Add(1)
			}
		}
	}()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			pc.conn.SetReadDeadline(time.Now().Add(time.Second))
			<-done
			return
		case <-tick.C:
			if _, err := pc.conn.Write(pc.query()); err == nil {
				pc.sent.Add(1)
			}
		}
	}
}

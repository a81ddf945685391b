package hostile

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"
)

// generousLimits are budgets far above what a test sends, so that the
// reflection ratio is the protocol's own and no budget hides it.
var generousLimits = map[string]any{
	"per_ip_rate": "64MiB", "per_ip_burst": "16MiB",
	"unproven_rate": "64MiB", "unproven_burst": "16MiB",
}

// TestReflectionRatio sends every request type of every protocol from many
// sources that never complete a challenge and measures bytes out ÷ bytes in.
// A2S, SAGL and SQP must never answer more than they receive; GameSpy4's
// handshake, Quake 3 and the Bedrock pong cannot help it (TestReflectionCaps
// holds them).
func TestReflectionRatio(t *testing.T) {
	d := StartDaemon(t, Tables{"limits": generousLimits, "quake3": {"packet_rate": 0}, "bedrock": {"packet_rate": 0}})
	const perSource, sourcesPerReq = 4, 8
	reqs := unprovenRequests()
	srcs := make([][]*Source, len(reqs))
	var all []*Source
	for i := range reqs {
		for j := 0; j < sourcesPerReq; j++ {
			s := NewSource(t, sourceIP(1, i*sourcesPerReq+j), d.UDPAddr)
			srcs[i] = append(srcs[i], s)
			all = append(all, s)
		}
	}
	before := d.Metrics(t)
	for k := 0; k < perSource; k++ {
		for i, r := range reqs {
			for _, s := range srcs[i] {
				if err := s.Send(r.Bytes); err != nil {
					t.Fatalf("%s %s: send: %v", r.Protocol, r.Name, err)
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitQuiet(all, 300*time.Millisecond, 5*time.Second)
	delta := d.Metrics(t).Sub(before)

	type tally struct{ in, out, inN, outN int64 }
	perProto := map[string]*tally{}
	var table strings.Builder
	fmt.Fprintf(&table, "%-10s %-28s %6s %8s %8s %7s\n", "protocol", "request", "bytes", "in", "out", "ratio")
	for i, r := range reqs {
		var tl tally
		for _, s := range srcs[i] {
			tl.in += s.sent.Load()
			tl.inN += s.sentN.Load()
			tl.out += s.recv.Load()
			tl.outN += s.recvN.Load()
		}
		row := protocolOf(r.Bytes) // where the daemon counts it ("unknown" if no protocol claims it)
		p := perProto[row]
		if p == nil {
			p = &tally{}
			perProto[row] = p
		}
		p.in, p.out, p.inN, p.outN = p.in+tl.in, p.out+tl.out, p.inN+tl.inN, p.outN+tl.outN
		ratio := float64(tl.out) / float64(tl.in)
		fmt.Fprintf(&table, "%-10s %-28s %6d %8d %8d %7.3f\n", r.Protocol, r.Name, len(r.Bytes), tl.in, tl.out, ratio)
		if neverAmplifies(r.Protocol) && ratio > 1.0 {
			t.Errorf("%s %s: %d bytes out for %d in (ratio %.3f > 1.0): an amplifier", r.Protocol, r.Name, tl.out, tl.in, ratio)
		}
	}
	names := make([]string, 0, len(perProto))
	for n := range perProto {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(&table, "per metrics row (the protocol that claims the datagram):\n")
	for _, n := range names {
		p := perProto[n]
		ratio := float64(p.out) / float64(p.in)
		mIn := delta.Sum("queryd_received_bytes_total", "protocol", n)
		mOut := delta.Sum("queryd_sent_bytes_total", "protocol", n)
		fmt.Fprintf(&table, "%-10s in %d out %d ratio %.3f (metrics in %.0f out %.0f); outcomes %v\n",
			n, p.in, p.out, ratio, mIn, mOut, delta.Requests(n))
		if neverAmplifies(n) && ratio > 1.0 {
			t.Errorf("%s: ratio %.3f > 1.0", n, ratio)
		}
		if mIn != float64(p.in) || mOut != float64(p.out) {
			t.Errorf("%s: metrics count %.0f bytes in / %.0f out; the sources sent %d and got %d", n, mIn, mOut, p.in, p.out)
		}
		if got := delta.Sum("queryd_requests_total", "protocol", n); got != float64(p.inN) {
			t.Errorf("%s: queryd_requests_total grew by %.0f; %d datagrams were sent", n, got, p.inN)
		}
		if got := delta.Requests(n)["answered"]; (n == "gamespy4" || n == "sagl" || n == "sqp") && got != 0 {
			t.Errorf("%s: %v requests answered to sources that never completed a challenge", n, got)
		}
	}
	if got := delta.Requests("a2s")["answered"]; got != float64(perSource*sourcesPerReq) {
		// Only the padded A2A_PING (6 B in, 6 B out) is answered without a challenge.
		t.Errorf("a2s: %v answered without a challenge, want %d (the padded pings)", got, perSource*sourcesPerReq)
	}
	t.Logf("reflection, %d sources per request type, %d datagrams each:\n%s", sourcesPerReq, perSource, table.String())
}

// neverAmplifies reports whether a protocol answers an unproven source no
// more than it sent (asserted): A2S, SAGL and SQP.
func neverAmplifies(proto string) bool { return proto == "a2s" || proto == "sagl" || proto == "sqp" }

// Small budgets for TestReflectionCaps, so that a modest flood hits them.
// The unproven budget is split among the daemon's receive loops (each at
// least 1,500 bytes of burst): 3,000 over two loops is 1,500 each.
const (
	capPerIPRate     = 2048
	capPerIPBurst    = 1500
	capUnprovenRate  = 8192
	capUnprovenBurst = 3000
)

// TestReflectionCaps floods the request types that answer more than they
// receive — the GameSpy4 handshake, Quake 3's getinfo/getstatus and the
// Bedrock ping — and checks that the reply bytes drawn stay within the per-IP and the
// global unproven budgets. One source alone meets its per-IP cap; sixteen
// together meet the global cap (16 × 2 KiB/s > 8 KiB/s).
func TestReflectionCaps(t *testing.T) {
	t.Parallel() // a flood of 4,000/s; it mostly waits for the budgets to refill
	skipShort(t, "seven floods at the byte budgets")
	d := StartDaemon(t, Tables{
		"listen": {"workers": testWorkers},
		"limits": {
			"per_ip_rate": capPerIPRate, "per_ip_burst": capPerIPBurst,
			"unproven_rate": capUnprovenRate, "unproven_burst": capUnprovenBurst,
		},
		"quake3":  {"packet_rate": 0}, // the byte budgets alone (the packet rate: TestQuake3PacketRate)
		"bedrock": {"packet_rate": 0},
	})
	cases := []struct {
		name    string
		req     []byte
		sources int
	}{
		{"gamespy4 handshake, 1 source", []byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4}, 1},
		{"gamespy4 handshake, 16 sources", []byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4}, 16},
		{"quake3 getstatus, 1 source", []byte("\xFF\xFF\xFF\xFFgetstatus"), 1},
		{"quake3 getstatus, 16 sources", []byte("\xFF\xFF\xFF\xFFgetstatus"), 16},
		{"quake3 getinfo challenge, 16 sources", []byte("\xFF\xFF\xFF\xFFgetinfo abcdefgh"), 16},
		{"bedrock ping, 1 source", bedrockPing02(), 1},
		{"bedrock ping, 16 sources", bedrockPing02(), 16},
	}
	for ci, c := range cases {
		var srcs []*Source
		for j := 0; j < c.sources; j++ {
			srcs = append(srcs, NewSource(t, sourceIP(2, ci*32+j), d.UDPAddr))
		}
		before := d.Metrics(t)
		start := time.Now()
		flood(t, srcs, c.req, 4000, 500*time.Millisecond)
		waitQuiet(srcs, 300*time.Millisecond, 3*time.Second)
		last := int64(0)
		var total, sent int64
		for _, s := range srcs {
			last = max(last, s.lastRecv.Load())
			total += s.recv.Load()
			sent += s.sent.Load()
		}
		window := time.Unix(0, last).Sub(start).Seconds()
		delta := d.Metrics(t).Sub(before)
		// The caps, plus one datagram of slack for the clock the daemon
		// reads at the start of each receive batch.
		slack := float64(maxReply(d, t, c.req))
		perIPCap := capPerIPBurst + capPerIPRate*window + slack
		globalCap := float64(unprovenBurstTotal(capUnprovenBurst)) + capUnprovenRate*window + slack
		worst := int64(0)
		for _, s := range srcs {
			worst = max(worst, s.recv.Load())
			if float64(s.recv.Load()) > perIPCap {
				t.Errorf("%s: source %s got %d bytes in %.2f s; the per-IP cap allows %.0f", c.name, s.Addr, s.recv.Load(), window, perIPCap)
			}
		}
		if float64(total) > globalCap {
			t.Errorf("%s: %d bytes to unproven sources in %.2f s; the global cap allows %.0f", c.name, total, window, globalCap)
		}
		// The flood must have pressed on the cap that binds, or the test proves nothing.
		binding := min(perIPCap*float64(c.sources), globalCap)
		if float64(total) < 0.6*binding {
			t.Errorf("%s: only %d bytes out (binding cap %.0f): the flood did not reach the budget", c.name, total, binding)
		}
		t.Logf("%s: sent %d B in %d datagrams; replies %d B (%.0f B/s over %.2f s; per source at most %d B, cap %.0f; global cap %.0f); outcomes %v",
			c.name, sent, srcs[0].sentN.Load()*int64(len(srcs)), total, float64(total)/window, window, worst, perIPCap, globalCap, delta.Requests(protoOf(c.req)))
	}
}

// maxReply asks the daemon once from a fresh source and returns the reply size.
func maxReply(d *Daemon, t testing.TB, req []byte) int {
	s := NewSource(t, "127.0.0.2", d.UDPAddr)
	defer s.Close()
	if err := s.Send(req); err != nil {
		t.Fatalf("send: %v", err)
	}
	waitQuiet([]*Source{s}, 200*time.Millisecond, 2*time.Second)
	if s.recvN.Load() != 1 {
		t.Fatalf("% X: %d replies, want 1", req, s.recvN.Load())
	}
	return int(s.recv.Load())
}

// protoOf names the protocol of a GameSpy4, Quake 3 or Bedrock request.
func protoOf(req []byte) string { return protocolOf(req) }

// flood sends req round-robin from srcs at rate datagrams per second for d.
func flood(t testing.TB, srcs []*Source, req []byte, rate float64, d time.Duration) {
	t.Helper()
	p := newPacer(rate)
	n := int(rate * d.Seconds())
	for i := 0; i < n; i++ {
		p.Wait(i)
		if err := srcs[i%len(srcs)].Send(req); err != nil {
			t.Fatalf("flood send: %v", err)
		}
	}
}

// TestQuake3PacketRate floods getinfo from a few sources with the default
// Quake 3 per-IP packet rate (a burst of 10, then 1 per second) and generous
// byte budgets: each source gets at most burst + rate × time replies.
func TestQuake3PacketRate(t *testing.T) {
	d := StartDaemon(t, Tables{"limits": generousLimits})
	var srcs []*Source
	for j := 0; j < 4; j++ {
		srcs = append(srcs, NewSource(t, sourceIP(3, j), d.UDPAddr))
	}
	start := time.Now()
	flood(t, srcs, []byte("\xFF\xFF\xFF\xFFgetinfo"), 2000, time.Second)
	waitQuiet(srcs, 300*time.Millisecond, 3*time.Second)
	window := time.Since(start).Seconds()
	allowed := int64(10 + 1*window)
	for _, s := range srcs {
		if got := s.recvN.Load(); got > allowed || got < 10 {
			t.Errorf("source %s: %d replies to %d getinfo in %.2f s; want 10 to %d (burst 10, 1/s)", s.Addr, got, s.sentN.Load(), window, allowed)
		}
	}
	t.Logf("quake3 packet rate: %d getinfo per source in %.2f s, %d replies each (burst 10 + 1/s)", srcs[0].sentN.Load(), window, srcs[0].recvN.Load())
}

// TestBedrockPacketRate floods pings from a few sources with the default
// Bedrock per-source packet rate (a burst of 10, then 2 per second) and
// generous byte budgets: each source gets at most burst + rate × time pongs.
func TestBedrockPacketRate(t *testing.T) {
	d := StartDaemon(t, Tables{"limits": generousLimits})
	var srcs []*Source
	for j := 0; j < 4; j++ {
		srcs = append(srcs, NewSource(t, sourceIP(7, j), d.UDPAddr))
	}
	start := time.Now()
	flood(t, srcs, bedrockPing02(), 2000, time.Second)
	waitQuiet(srcs, 300*time.Millisecond, 3*time.Second)
	window := time.Since(start).Seconds()
	allowed := int64(10 + 2*window)
	for _, s := range srcs {
		if got := s.recvN.Load(); got > allowed || got < 10 {
			t.Errorf("source %s: %d pongs to %d pings in %.2f s; want 10 to %d (burst 10, 2/s)", s.Addr, got, s.sentN.Load(), window, allowed)
		}
	}
	t.Logf("bedrock packet rate: %d pings per source in %.2f s, %d pongs each of %d B (burst 10 + 2/s)",
		srcs[0].sentN.Load(), window, srcs[0].recvN.Load(), srcs[0].recv.Load()/max(srcs[0].recvN.Load(), 1))
}

// TestStaleSilence lets the feed go stale and sends every request type from
// several sources: nothing at all is answered (not even a challenge) and
// every datagram is counted as stale; the next feed message revives it.
func TestStaleSilence(t *testing.T) {
	t.Parallel() // it waits for stale_after
	d := StartDaemon(t, Tables{"feed": {"stale_after": "500ms"}, "limits": generousLimits})
	fc := d.Feed(t)
	if _, err := fc.Ping(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	var srcs []*Source
	for j := 0; j < 4; j++ {
		srcs = append(srcs, NewSource(t, sourceIP(6, j), d.UDPAddr))
	}
	before := d.Metrics(t)
	sent := 0
	for _, s := range srcs {
		for _, r := range unprovenRequests() {
			if err := s.Send(r.Bytes); err != nil {
				t.Fatal(err)
			}
			sent++
		}
	}
	time.Sleep(400 * time.Millisecond)
	delta := d.Metrics(t).Sub(before)
	for _, s := range srcs {
		if n := s.recvN.Load(); n != 0 {
			t.Errorf("stale feed: %s got %d replies", s.Addr, n)
		}
	}
	if got := delta.Sum("queryd_requests_total", "outcome", "stale"); got != float64(sent) {
		t.Errorf("stale feed: %.0f datagrams counted as stale; %d were sent", got, sent)
	}
	if _, err := fc.Ping(); err != nil {
		t.Fatal(err)
	}
	answerAll(t, d, "hostile test")
}

// TestReflectionRatioIPv6 sends every unproven request type over IPv6
// (from ::1 to a daemon also listening on [::1]) and checks that A2S, SAGL
// and SQP answer no more bytes than they receive there too.
func TestReflectionRatioIPv6(t *testing.T) {
	probe, err := net.ListenPacket("udp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	port := probe.LocalAddr().(*net.UDPAddr).Port
	probe.Close()
	d := newDaemon(t, nil)
	v6 := fmt.Sprintf("[::1]:%d", port)
	d.WriteConfig(t, baseTables(), Tables{"limits": generousLimits, "quake3": {"packet_rate": 0}, "listen": {"udp": []string{d.UDPAddr, v6}}})
	d.Start(t)
	c, err := net.Dial("udp6", v6)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 65536)
	var table strings.Builder
	for _, r := range unprovenRequests() {
		if _, err := c.Write(r.Bytes); err != nil {
			t.Fatal(err)
		}
		out, wait := 0, 150*time.Millisecond
		for {
			c.SetReadDeadline(time.Now().Add(wait))
			n, err := c.Read(buf)
			if err != nil {
				break
			}
			out += n
			wait = 30 * time.Millisecond // any further datagram of the same reply
		}
		ratio := float64(out) / float64(len(r.Bytes))
		fmt.Fprintf(&table, "%-10s %-28s %4d B in, %4d B out, ratio %.2f\n", r.Protocol, r.Name, len(r.Bytes), out, ratio)
		if neverAmplifies(r.Protocol) && ratio > 1.0 {
			t.Errorf("IPv6 %s %s: %d bytes out for %d in", r.Protocol, r.Name, out, len(r.Bytes))
		}
	}
	t.Logf("IPv6 (::1), one datagram each:\n%s", table.String())
}

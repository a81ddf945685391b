package hostile

import (
	"fmt"
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
// A2S and SAGL must never answer more than they receive; GameSpy4's handshake
// and Quake 3 cannot help it (TestReflectionCaps holds them).
func TestReflectionRatio(t *testing.T) {
	d := StartDaemon(t, Tables{"limits": generousLimits, "quake3": {"packet_rate": 0}})
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
		p := perProto[r.Protocol]
		if p == nil {
			p = &tally{}
			perProto[r.Protocol] = p
		}
		p.in, p.out, p.inN, p.outN = p.in+tl.in, p.out+tl.out, p.inN+tl.inN, p.outN+tl.outN
		ratio := float64(tl.out) / float64(tl.in)
		fmt.Fprintf(&table, "%-10s %-28s %6d %8d %8d %7.3f\n", r.Protocol, r.Name, len(r.Bytes), tl.in, tl.out, ratio)
		if (r.Protocol == "a2s" || r.Protocol == "sagl") && ratio > 1.0 {
			t.Errorf("%s %s: %d bytes out for %d in (ratio %.3f > 1.0): an amplifier", r.Protocol, r.Name, tl.out, tl.in, ratio)
		}
	}
	names := make([]string, 0, len(perProto))
	for n := range perProto {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(&table, "per protocol (metrics: received/sent bytes):\n")
	for _, n := range names {
		p := perProto[n]
		ratio := float64(p.out) / float64(p.in)
		mIn := delta.Sum("queryd_received_bytes_total", "protocol", n)
		mOut := delta.Sum("queryd_sent_bytes_total", "protocol", n)
		fmt.Fprintf(&table, "%-10s in %d out %d ratio %.3f (metrics in %.0f out %.0f); outcomes %v\n",
			n, p.in, p.out, ratio, mIn, mOut, delta.Requests(n))
		if (n == "a2s" || n == "sagl") && ratio > 1.0 {
			t.Errorf("%s: ratio %.3f > 1.0", n, ratio)
		}
		if mIn != float64(p.in) || mOut != float64(p.out) {
			t.Errorf("%s: metrics count %.0f bytes in / %.0f out; the sources sent %d and got %d", n, mIn, mOut, p.in, p.out)
		}
		if got := delta.Sum("queryd_requests_total", "protocol", n); got != float64(p.inN) {
			t.Errorf("%s: queryd_requests_total grew by %.0f; %d datagrams were sent", n, got, p.inN)
		}
		if got := delta.Requests(n)["answered"]; n != "quake3" && n != "a2s" && got != 0 {
			t.Errorf("%s: %v requests answered to sources that never completed a challenge", n, got)
		}
	}
	if got := delta.Requests("a2s")["answered"]; got != float64(perSource*sourcesPerReq) {
		// Only the padded A2A_PING (6 B in, 6 B out) is answered without a challenge.
		t.Errorf("a2s: %v answered without a challenge, want %d (the padded pings)", got, perSource*sourcesPerReq)
	}
	t.Logf("reflection, %d sources per request type, %d datagrams each:\n%s", sourcesPerReq, perSource, table.String())
}

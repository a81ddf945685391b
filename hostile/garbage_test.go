package hostile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/protocols"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/sagl"
	"github.com/queryd/queryd/sqp"
)

// demux is the daemon's demultiplexing order (protocols.List) with
// each protocol package's own Claims: the test predicts where every
// datagram must be counted (TestEveryProtocolAttacked holds it to the list).
var demux = []struct {
	name   string
	claims func([]byte) bool
}{
	{"a2s", a2s.Claims},
	{"gamespy4", gamespy4.Claims},
	{"sagl", sagl.Claims},
	{"quake3", quake3.Claims},
	{"bedrock", bedrock.Claims},
	{"sqp", sqp.Claims},
}

// protocolOf returns the metrics row a datagram is counted in.
func protocolOf(p []byte) string {
	for _, d := range demux {
		if d.claims(p) {
			return d.name
		}
	}
	return "unknown"
}

// randomDatagrams returns n datagrams of 0 to 1,500 random bytes; every
// fourth starts with one protocol's magic so that it reaches a parser.
func randomDatagrams(rng *rand.Rand, n int) [][]byte {
	magics := [][]byte{{0xFF, 0xFF, 0xFF, 0xFF}, {0xFE, 0xFD}, []byte("SAGQ"), []byte("\xFF\xFF\xFF\xFFgetstatus"), []byte("\xFF\xFF\xFF\xFFT")}
	out := make([][]byte, n)
	for i := range out {
		p := make([]byte, rng.IntN(1501))
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		if i%4 == 0 {
			m := magics[rng.IntN(len(magics))]
			p = append(append([]byte{}, m...), p[min(len(m), len(p)):]...)
		}
		out[i] = p
	}
	return out
}

// mutations returns broken variants of every valid request: each
// truncation, each magic byte changed, longer and shorter lengths, extreme
// tokens, counts and offsets, and random bit flips and byte changes.
func mutations(rng *rand.Rand) [][]byte {
	var out [][]byte
	add := func(p []byte) { out = append(out, p) }
	for _, r := range unprovenRequests() {
		b := r.Bytes
		for n := 0; n < len(b); n++ {
			add(bytes.Clone(b[:n]))
		}
		for i := 0; i < min(4, len(b)); i++ {
			m := bytes.Clone(b)
			m[i] ^= 0x20
			add(m)
		}
		add(append(bytes.Clone(b), 0))
		add(append(bytes.Clone(b), bytes.Repeat([]byte{0xFF}, 7)...))
		add(append(bytes.Clone(b), make([]byte, 1500-len(b))...))
		for k := 0; k < 12; k++ {
			m := bytes.Clone(b)
			m[rng.IntN(len(m))] ^= 1 << rng.IntN(8)
			add(m)
			m = bytes.Clone(b)
			m[rng.IntN(len(m))] = byte(rng.Uint32())
			add(m)
		}
	}
	// A2S: every type byte, extreme tokens.
	for typ := 0; typ < 256; typ += 7 {
		add(a2sReq(byte(typ), le32(0xFFFFFFFF)))
	}
	for _, tok := range []uint32{0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE} {
		add(a2sReq('U', le32(tok)))
		add(a2sReq('V', le32(tok)))
		add(a2sReq('T', []byte("Source Engine Query\x00"), le32(tok)))
	}
	add(a2sReq('T', []byte("Source Engine Query"))) // no NUL
	add(a2sReq('T', []byte("SOURCE")))
	// GameSpy4: every type byte, huge tokens, lengths 2 to 16.
	for typ := 0; typ < 256; typ += 5 {
		add([]byte{0xFE, 0xFD, byte(typ), 1, 2, 3, 4, 0xFF, 0xFF, 0xFF, 0xFF})
	}
	for n := 3; n <= 16; n++ {
		add(append([]byte{0xFE, 0xFD, 0x00}, bytes.Repeat([]byte{0xFF}, n-3)...))
	}
	// SAGL: every version and kind class, huge offsets, wrong sizes.
	for _, v := range []byte{0, 2, 255} {
		p := sagl.AppendRequest(nil, sagl.Request{Kind: sagl.KindInfo})
		p[4] = v
		add(p)
	}
	for _, k := range []byte{0, 3, 255} {
		p := sagl.AppendRequest(nil, sagl.Request{Kind: sagl.KindInfo})
		p[5] = k
		add(p)
	}
	for _, off := range []uint32{1, 1023, 1024, 1 << 20, 0x7FFFFFFF, 0xFFFFFFFF} {
		add(sagl.AppendRequest(nil, sagl.Request{Kind: sagl.KindLogo, Token: bogusToken, Offset: off}))
		add(sagl.AppendRequest(nil, sagl.Request{Kind: sagl.KindLogo, Offset: off}))
	}
	for _, n := range []int{4, 63, 65, 128, 1500} {
		p := make([]byte, n)
		copy(p, "SAGQ\x01\x01")
		add(p)
	}
	// Quake 3: long and forbidden challenges, odd case, trailing junk.
	for _, s := range []string{
		"getinfo " + string(bytes.Repeat([]byte{'x'}, 129)),
		"getstatus " + string(bytes.Repeat([]byte{'y'}, 1400)),
		"getinfo a\\b", "getinfo a;b", "getinfo \"x\"", "getinfo \x7f", "getinfo \x01",
		"GETSTATUS", "GetInfo xyz", "getinfox", "getstatusgetstatus", "getinfo\x00junk", "getstatus\njunk",
	} {
		add(append([]byte{0xFF, 0xFF, 0xFF, 0xFF}, s...))
	}
	// Bedrock: every message id with the magic at offset 9 (only 01 and 02
	// are pings), the magic at offset 1 (open connection requests), and
	// pings one byte short or long.
	ping := bedrock.AppendPing(nil, 1, 2)
	for id := 0; id < 256; id += 9 {
		add(append([]byte{byte(id)}, ping[1:]...))
	}
	add(append(append([]byte{0x05}, bedrock.Magic[:]...), make([]byte, 16)...))
	add(ping[:bedrock.PingLen-1])
	add(append(bytes.Clone(ping), 0))
	// SQP: every third chunks byte, other versions, 4 to 9 zero bytes.
	for c := 0; c < 256; c += 3 {
		add(sqp.AppendQuery(nil, bogusToken, byte(c)))
	}
	for _, v := range []uint16{0, 2, 0x100, 0xFFFF} {
		p := sqp.AppendQuery(nil, bogusToken, 1)
		p[5], p[6] = byte(v>>8), byte(v)
		add(p)
	}
	for n := 4; n <= 9; n++ {
		add(make([]byte, n))
	}
	return out
}

// TestGarbage sends random datagrams and mutated requests of every protocol
// from 16 sources: the daemon must survive, count every datagram in the row
// of the protocol that claims it (or "unknown"), report no socket errors,
// and answer every protocol's valid queries afterwards.
func TestGarbage(t *testing.T) {
	d := StartDaemon(t, nil)
	rng := rand.New(rand.NewPCG(5, 1500))
	random := randomDatagrams(rng, 4000)
	mutated := mutations(rng)
	var srcs []*Source
	for j := 0; j < 16; j++ {
		srcs = append(srcs, NewSource(t, sourceIP(4, j), d.UDPAddr))
	}
	before := d.Metrics(t)
	want := map[string]int{}
	sent := 0
	p := newPacer(6000)
	for _, set := range [][][]byte{random, mutated} {
		for _, dg := range set {
			p.Wait(sent)
			if err := srcs[sent%len(srcs)].Send(dg); err != nil {
				t.Fatalf("send %d bytes: %v", len(dg), err)
			}
			want[protocolOf(dg)]++
			sent++
		}
	}
	delta := settle(t, d, before, float64(sent), 10*time.Second)

	counted := delta.Sum("queryd_requests_total")
	overflow := delta.Sum("queryd_socket_errors_total", "op", "overflow")
	t.Logf("garbage: %d random + %d mutated = %d datagrams; counted %.0f; socket errors: receive %.0f, send %.0f, truncated %.0f, overflow %.0f",
		len(random), len(mutated), sent, counted,
		delta.Sum("queryd_socket_errors_total", "op", "receive"), delta.Sum("queryd_socket_errors_total", "op", "send"),
		delta.Sum("queryd_socket_errors_total", "op", "truncated"), overflow)
	if counted != float64(sent) {
		t.Errorf("queryd_requests_total grew by %.0f; %d datagrams were sent (overflow drops: %.0f)", counted, sent, overflow)
	}
	for _, op := range []string{"receive", "send", "truncated", "overflow"} {
		if n := delta.Sum("queryd_socket_errors_total", "op", op); n != 0 {
			t.Errorf("queryd_socket_errors_total{op=%q} grew by %.0f", op, n)
		}
	}
	for _, row := range append(protocols.Names(), "unknown") {
		outcomes := delta.Requests(row)
		var total float64
		for _, n := range outcomes {
			total += n
		}
		t.Logf("  %-8s sent %5d, counted %5.0f: %s", row, want[row], total, fmtOutcomes(outcomes))
		if total != float64(want[row]) {
			t.Errorf("%s: counted %.0f datagrams; %d were its", row, total, want[row])
		}
		if row != "unknown" && outcomes["malformed"] == 0 {
			t.Errorf("%s: no datagram counted as malformed", row)
		}
	}
	if got := delta.Requests("unknown")["unknown"]; got != float64(want["unknown"]) {
		t.Errorf("unknown: %.0f counted as unknown; %d datagrams no protocol claims were sent", got, want["unknown"])
	}
	answerAll(t, d, "hostile test")
}

// TestOversizeDatagrams sends datagrams larger than the daemon reads whole
// (2,048 bytes): each is dropped and counted once as a truncated socket
// error, not as a request, and nothing is answered.
func TestOversizeDatagrams(t *testing.T) {
	d := StartDaemon(t, nil)
	src := NewSource(t, sourceIP(4, 100), d.UDPAddr)
	var sent int
	before := d.Metrics(t)
	for _, n := range []int{2049, 4096, 9000, 65507} {
		for _, prefix := range [][]byte{a2sReq('T', []byte("Source Engine Query\x00")), []byte("\xFF\xFF\xFF\xFFgetstatus"), {0xFE, 0xFD, 0x09, 1, 2, 3, 4}, sagl.AppendRequest(nil, sagl.Request{Kind: sagl.KindInfo}), nil} {
			p := append(append([]byte{}, prefix...), make([]byte, n-len(prefix))...)
			if err := src.Send(p); err != nil {
				t.Fatalf("send %d bytes: %v", n, err)
			}
			sent++
		}
	}
	delta := settleTruncated(t, d, before, float64(sent))
	if got := delta.Sum("queryd_socket_errors_total", "op", "truncated"); got != float64(sent) {
		t.Errorf("%.0f datagrams counted as truncated; %d oversize datagrams were sent", got, sent)
	}
	if got := delta.Sum("queryd_requests_total"); got != 0 {
		t.Errorf("oversize datagrams also counted as %.0f requests", got)
	}
	waitQuiet([]*Source{src}, 200*time.Millisecond, time.Second)
	if n := src.recvN.Load(); n != 0 {
		t.Errorf("%d replies to oversize datagrams", n)
	}
	t.Logf("%d oversize datagrams (2,049 to 65,507 bytes): truncated %.0f, requests %.0f, replies %d", sent,
		delta.Sum("queryd_socket_errors_total", "op", "truncated"), delta.Sum("queryd_requests_total"), src.recvN.Load())
	answerAll(t, d, "hostile test")
}

// settleTruncated waits until the truncated counter has grown by want.
func settleTruncated(t testing.TB, d *Daemon, before Metrics, want float64) Metrics {
	t.Helper()
	var delta Metrics
	waitFor(3*time.Second, func() bool {
		delta = d.Metrics(t).Sub(before)
		return delta.Sum("queryd_socket_errors_total", "op", "truncated") >= want
	})
	return delta
}

func fmtOutcomes(m map[string]float64) string {
	s := ""
	for _, k := range []string{"answered", "challenged", "malformed", "ignored", "rate_limited", "unknown", "stale", "forwarded", "relay_dropped"} {
		if m[k] != 0 {
			s += fmt.Sprintf("%s %.0f, ", k, m[k])
		}
	}
	return s
}

// settle scrapes /metrics until queryd_requests_total has grown by want
// since before (plus kernel overflow drops), or limit passes; it returns
// the last difference.
func settle(t testing.TB, d *Daemon, before Metrics, want float64, limit time.Duration) Metrics {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		delta := d.Metrics(t).Sub(before)
		got := delta.Sum("queryd_requests_total") + delta.Sum("queryd_socket_errors_total", "op", "overflow")
		if got >= want || time.Now().After(deadline) {
			return delta
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// answerAll checks that every protocol answers a real client's valid query.
func answerAll(t testing.TB, d *Daemon, name string) {
	t.Helper()
	ac, err := a2s.Dial(d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	if info, err := ac.Info(); err != nil || info.Name != name {
		t.Errorf("A2S_INFO afterwards: %+v, %v", info, err)
	}
	if pl, err := ac.Players(); err != nil || len(pl) != 2 {
		t.Errorf("A2S_PLAYER afterwards: %+v, %v", pl, err)
	}
	if rules, err := ac.Rules(); err != nil || len(rules) == 0 {
		t.Errorf("A2S_RULES afterwards: %v, %v", rules, err)
	}
	gc, err := gamespy4.Dial(d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	if full, err := gc.Full(); err != nil {
		t.Errorf("GameSpy4 full stat afterwards: %v", err)
	} else if len(full.Players) != 2 {
		t.Errorf("GameSpy4 full stat afterwards: players %v", full.Players)
	}
	sc, err := sagl.Dial(d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if res, err := sc.Info(); err != nil {
		t.Errorf("SAGL info afterwards: %v", err)
	} else if res.Info.Name != name {
		t.Errorf("SAGL info afterwards: name %q", res.Info.Name)
	}
	qc, err := quake3.Dial(d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer qc.Close()
	if st, err := qc.Status(); err != nil {
		t.Errorf("Quake 3 getstatus afterwards: %v", err)
	} else if len(st.Players) != 2 {
		t.Errorf("Quake 3 getstatus afterwards: players %v", st.Players)
	}
	bc, err := bedrock.Dial(d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close()
	if p, err := bc.Ping(); err != nil {
		t.Errorf("Bedrock ping afterwards: %v", err)
	} else if p.Status.MOTD != name || p.Status.Players != 2 {
		t.Errorf("Bedrock ping afterwards: %+v", p.Status)
	}
	pc, err := sqp.Dial(d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if r, err := pc.Query(sqp.AllChunks); err != nil {
		t.Errorf("SQP query afterwards: %v", err)
	} else if r.Info.ServerName != name || len(r.Players.Rows) != 2 {
		t.Errorf("SQP query afterwards: %+v, %d players", r.Info, len(r.Players.Rows))
	}
}

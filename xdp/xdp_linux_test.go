//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sagl"
	"github.com/queryd/queryd/sqp"
)

// requests reads queryd_requests_total{protocol, outcome} from the registry.
func requests(t *testing.T, fx *fixture, protocol, outcome string) float64 {
	t.Helper()
	mfs, err := fx.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "queryd_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["protocol"] == protocol && labels["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// Program rows (the protocols' places in bpf/protocols.h, by name).
var (
	pA2S, pGS4, pQ3       = testRow("a2s"), testRow("gamespy4"), testRow("quake3")
	pSQP, pBedrock, pSAGL = testRow("sqp"), testRow("bedrock"), testRow("sagl")
)

// testRow is the embedded program's row of the protocol named name.
func testRow(name string) int {
	l, err := embedded()
	if err != nil {
		panic(err)
	}
	i, ok := l.row(name)
	if !ok {
		panic("the program has no protocol " + name)
	}
	return i
}

// Program columns (enum outcome in bpf/consts.h).
const (
	oAnswered   = int(querydOutcomeOUT_ANSWERED)
	oOpen       = int(querydOutcomeOUT_OPEN)
	oChallenged = int(querydOutcomeOUT_CHALLENGED)
	oLimited    = int(querydOutcomeOUT_RATE_LIMITED)
	oStale      = int(querydOutcomeOUT_STALE)
)

var (
	a2sInfo    = []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")
	gs4Session = []byte{0x01, 0x02, 0x03, 0x04}
)

func a2sWithToken(kind byte, tok []byte) []byte {
	if kind == 'T' {
		return append(append([]byte{}, a2sInfo...), tok...)
	}
	return append([]byte{0xFF, 0xFF, 0xFF, 0xFF, kind}, tok...)
}

func gs4Handshake() []byte { return append([]byte{0xFE, 0xFD, 0x09}, gs4Session...) }

func gs4Stat(tok uint32, full bool) []byte {
	b := append([]byte{0xFE, 0xFD, 0x00}, gs4Session...)
	b = binary.BigEndian.AppendUint32(b, tok)
	if full {
		b = append(b, 0xFF, 0xFF, 0xFF, 0x01)
	}
	return b
}

// gs4Token reads the token of a handshake reply (09 session digits 00).
func gs4Token(t *testing.T, reply []byte) uint32 {
	t.Helper()
	if len(reply) < 7 || reply[0] != 0x09 {
		t.Fatalf("not a handshake reply: % x", reply)
	}
	n, err := strconv.ParseUint(string(bytes.TrimRight(reply[5:], "\x00")), 10, 32)
	if err != nil {
		t.Fatalf("handshake token: %v", err)
	}
	return uint32(n)
}

// viaBoth asks req through the fast path and then through the socket path
// (the program disabled), and returns both replies. It fails when the fast
// path did not count the answer as (proto, outcome), or when the socket
// path's answer went through the program.
func viaBoth(t *testing.T, fx *fixture, c *client, req []byte, proto, outcome int) (fast, sock []byte) {
	t.Helper()
	before := fx.count(t, proto, outcome)
	fast = c.ask(t, req, time.Second)
	if fast == nil {
		t.Fatalf("% x: no answer through XDP", req)
	}
	if got := fx.count(t, proto, outcome); got != before+1 {
		t.Fatalf("% x: the program counted %d answers (proto %d, outcome %d), want 1: the socket path answered", req, got-before, proto, outcome)
	}
	fx.setEnabled(t, false)
	defer fx.setEnabled(t, true)
	sock = c.ask(t, req, time.Second)
	if sock == nil {
		t.Fatalf("% x: no answer through the socket path", req)
	}
	if got := fx.count(t, proto, outcome); got != before+1 {
		t.Fatalf("% x: the program answered while disabled", req)
	}
	return fast, sock
}

// TestXDPByteEquality: for every query kind the program answers, over IPv4
// and IPv6, its reply is byte for byte the socket path's for the same state
// and token. That the client's kernel delivers the replies at all shows
// their IPv4 header and UDP checksums are right (it drops bad ones).
func TestXDPByteEquality(t *testing.T) {
	fx := newFixture(t, responder.Limits{PerIPRate: 1 << 30, PerIPBurst: 1 << 20, UnprovenRate: 1 << 30, UnprovenBurst: 1 << 20, TrackedIPs: 1024})
	for _, fam := range []struct {
		name     string
		src, dst netip.Addr
	}{{"IPv4", cliAddr4, srvAddr4}, {"IPv6", cliAddr6, srvAddr6}} {
		t.Run(fam.name, func(t *testing.T) {
			c := fx.dial(t, fam.src, fam.dst)
			// Replies that depend on the token epoch or on the second (the
			// players' durations, which the program gets up to one sync,
			// 50 ms, after the second turns) are compared again when they
			// differ: a real difference stays three times running.
			same := func(name string, req []byte, proto, outcome int) []byte {
				for try := 0; ; try++ {
					fast, sock := viaBoth(t, fx, c, req, proto, outcome)
					if bytes.Equal(fast, sock) {
						t.Logf("%s: %d bytes, equal", name, len(fast))
						return fast
					}
					if try == 2 {
						t.Fatalf("%s: XDP and the socket path differ:\nxdp:    % x\nsocket: % x", name, fast, sock)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			ch := same("A2S challenge", a2sInfo, pA2S, oChallenged)
			if len(ch) != 9 || ch[4] != 'A' {
				t.Fatalf("A2S challenge: % x", ch)
			}
			tok := ch[5:9]
			same("A2S_INFO", a2sWithToken('T', tok), pA2S, oAnswered)
			same("A2S_PLAYER", a2sWithToken('U', tok), pA2S, oAnswered)
			same("A2S_RULES", a2sWithToken('V', tok), pA2S, oAnswered)
			same("A2S_PLAYER challenge", a2sWithToken('U', []byte{0xFF, 0xFF, 0xFF, 0xFF}), pA2S, oChallenged)
			hs := same("GameSpy4 handshake", gs4Handshake(), pGS4, oChallenged)
			gtok := gs4Token(t, hs)
			same("GameSpy4 basic stat", gs4Stat(gtok, false), pGS4, oAnswered)
			same("GameSpy4 full stat", gs4Stat(gtok, true), pGS4, oAnswered)
			same("Quake 3 getinfo", []byte("\xFF\xFF\xFF\xFFgetinfo"), pQ3, oOpen)
			same("Quake 3 getstatus", []byte("\xFF\xFF\xFF\xFFgetstatus\n"), pQ3, oOpen)
			stok := sqpToken(t, same("SQP challenge", sqpChallenge, pSQP, oChallenged))
			same("SQP ServerInfo", sqpQuery(stok, sqp.ChunkServerInfo), pSQP, oAnswered)
			same("SQP every chunk", sqpQuery(stok, sqp.AllChunks), pSQP, oAnswered)
			same("SQP no chunk", sqpQuery(stok, 0), pSQP, oAnswered)
			same("Bedrock pong", bedrockPing, pBedrock, oOpen)
			same("Bedrock pong, open connections", append([]byte{0x02}, bedrockPing[1:]...), pBedrock, oOpen)
			atok := saglToken(t, same("SAGL challenge", saglRequest(sagl.KindInfo, 0, 0), pSAGL, oChallenged))
			same("SAGL logo challenge", saglRequest(sagl.KindLogo, 0, 0), pSAGL, oChallenged)
			same("SAGL info", saglRequest(sagl.KindInfo, atok, 0), pSAGL, oAnswered)
		})
	}
}

// TestXDPPassesTheRest: what the program does not answer reaches the socket
// path untouched (a Quake 3 challenge argument, A2S compat off, garbage).
func TestXDPPassesTheRest(t *testing.T) {
	fx := newFixture(t, responder.Limits{})
	c := fx.dial(t, cliAddr4, srvAddr4)
	st0, _ := fx.stats()
	reply := c.ask(t, []byte("\xFF\xFF\xFF\xFFgetinfo xyz"), time.Second)
	if !bytes.Contains(reply, []byte(`\challenge\xyz`)) {
		t.Fatalf("getinfo with a challenge: %q", reply)
	}
	if r := c.ask(t, []byte("garbage"), 200*time.Millisecond); r != nil {
		t.Fatalf("garbage answered: %q", r)
	}
	st1, _ := fx.stats()
	if other := querydPassReasonPASS_OTHER; st1.Passed[other] < st0.Passed[other]+2 {
		t.Fatalf("passed %d datagrams as other, want 2 (all: %v)", st1.Passed[other]-st0.Passed[other], st1.Passed)
	}
	if st1.Req != st0.Req {
		t.Fatal("the program answered what it must pass")
	}
}

// TestXDPTokenBoundToAddress: a token from one address is refused from
// another (a challenge comes back), in the program.
func TestXDPTokenBoundToAddress(t *testing.T) {
	fx := newFixture(t, responder.Limits{})
	a := fx.dial(t, cliAddr4, srvAddr4)
	b := fx.dial(t, cliAddr4b, srvAddr4)
	ch := a.ask(t, a2sInfo, time.Second)
	if len(ch) != 9 {
		t.Fatalf("challenge: % x", ch)
	}
	tok := ch[5:9]
	if r := a.ask(t, a2sWithToken('T', tok), time.Second); len(r) < 5 || r[4] != 'I' {
		t.Fatalf("own token: % x", r)
	}
	before := fx.count(t, pA2S, oChallenged)
	r := b.ask(t, a2sWithToken('T', tok), time.Second)
	if len(r) != 9 || r[4] != 'A' || bytes.Equal(r[5:9], tok) {
		t.Fatalf("another address's token: want a challenge with another token, got % x", r)
	}
	if fx.count(t, pA2S, oChallenged) != before+1 {
		t.Fatal("the challenge did not come from the program")
	}
	// GameSpy4: a stat with another address's token gets nothing from the
	// program (the socket path ignores it too).
	gtok := gs4Token(t, a.ask(t, gs4Handshake(), time.Second))
	ans := fx.count(t, pGS4, oAnswered)
	if r := b.ask(t, gs4Stat(gtok, true), 300*time.Millisecond); r != nil {
		t.Fatalf("GameSpy4 stat with another address's token answered: % x", r)
	}
	if fx.count(t, pGS4, oAnswered) != ans {
		t.Fatal("the program answered another address's GameSpy4 token")
	}
}

// TestXDPTokenExpiry: tokens live as in user space: still valid in the next
// epoch (30 s later), refused two epochs later. The program's clock is
// moved; the token was issued at the real time.
func TestXDPTokenExpiry(t *testing.T) {
	fx := newFixture(t, responder.Limits{})
	c := fx.dial(t, cliAddr4, srvAddr4)
	ch := c.ask(t, a2sInfo, time.Second)
	tok := ch[5:9]
	fx.shiftClock(t, 30*time.Second)
	if r := c.ask(t, a2sWithToken('T', tok), time.Second); len(r) < 5 || r[4] != 'I' {
		t.Fatalf("a token one epoch old: want the INFO reply, got % x", r)
	}
	fx.shiftClock(t, 60*time.Second)
	before := fx.count(t, pA2S, oChallenged)
	if r := c.ask(t, a2sWithToken('T', tok), time.Second); len(r) != 9 || r[4] != 'A' {
		t.Fatalf("a token two epochs old: want a challenge, got % x", r)
	}
	if fx.count(t, pA2S, oChallenged) != before+1 {
		t.Fatal("the challenge did not come from the program")
	}
	// The new token is the one user space issues 60 s from now.
	later := challenge.NewWithKey(fx.issuer.Key(), func() time.Time { return time.Now().Add(60 * time.Second) })
	for try := 0; ; try++ {
		r := c.ask(t, a2sInfo, time.Second)
		want := later.Token(cliAddr4)
		if len(r) == 9 && binary.LittleEndian.Uint32(r[5:]) == want {
			break
		}
		if try == 2 {
			t.Fatalf("challenge % x, want token %#x (user space's, 60 s on)", r, want)
		}
	}
}

// TestXDPStale: a stale feed silences the program, every protocol's
// queries (dropped, counted as "stale" under queryd_requests_total), and a
// feed message revives it.
func TestXDPStale(t *testing.T) {
	t.Parallel() // namespaces of its own; it mostly waits for replies
	fx := newFixture(t, responder.Limits{})
	c := fx.dial(t, cliAddr4, srvAddr4)
	fx.lastFed.Store(time.Now().Add(-time.Hour).UnixNano())
	fx.fp.Changed(testServer)
	deadline := time.Now().Add(2 * time.Second)
	for fx.count(t, pA2S, oStale) == 0 && time.Now().Before(deadline) {
		if r := c.ask(t, a2sInfo, 100*time.Millisecond); r != nil && fx.count(t, pA2S, oStale) > 0 {
			t.Fatalf("answered while stale: % x", r)
		}
	}
	for _, req := range [][]byte{a2sInfo, gs4Handshake(), []byte("\xFF\xFF\xFF\xFFgetstatus"), sqpChallenge, bedrockPing, saglRequest(sagl.KindInfo, 0, 0)} {
		if r := c.ask(t, req, 300*time.Millisecond); r != nil {
			t.Fatalf("% x answered while the feed is stale: % x", req, r)
		}
	}
	for _, p := range []int{pA2S, pGS4, pQ3, pSQP, pBedrock, pSAGL} {
		if fx.count(t, p, oStale) == 0 {
			t.Fatalf("protocol %d: no stale drop counted by the program", p)
		}
	}
	if n := requests(t, fx, "a2s", "stale"); n == 0 {
		t.Fatal(`queryd_requests_total{protocol="a2s",outcome="stale"} is 0`)
	}
	fx.lastFed.Store(time.Now().UnixNano())
	deadline = time.Now().Add(2 * time.Second)
	for {
		if r := c.ask(t, a2sInfo, 100*time.Millisecond); len(r) == 9 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no answer within 2 s of a feed message")
		}
	}
}

// TestXDPPerIPBudget: the per-IP byte budget holds in the program: a burst
// of token-bearing A2S_INFO gets at most burst + rate × elapsed bytes back,
// the rest counted as rate_limited.
func TestXDPPerIPBudget(t *testing.T) {
	const rate, burst = 3000, 1500
	fx := newFixture(t, responder.Limits{PerIPRate: rate, PerIPBurst: burst, UnprovenRate: 1 << 20, UnprovenBurst: 64 << 10, TrackedIPs: 1024})
	c := fx.dial(t, cliAddr4, srvAddr4)
	tok := c.ask(t, a2sInfo, time.Second)[5:9]
	time.Sleep(time.Second) // the challenge's bytes come back
	req := a2sWithToken('T', tok)
	start := time.Now()
	const n = 200
	for i := 0; i < n; i++ {
		if _, err := c.c.Write(req); err != nil {
			t.Fatal(err)
		}
	}
	got, size := 0, 0
	buf := make([]byte, 2048)
	for {
		c.c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		k, err := c.c.Read(buf)
		if err != nil {
			break
		}
		got++
		size = k
	}
	elapsed := time.Since(start).Seconds()
	limit := burst + int(rate*elapsed) + size
	t.Logf("%d of %d answered (%d bytes each) in %.2f s: %d bytes, budget %d", got, n, size, elapsed, got*size, limit)
	if got == 0 || got*size > limit {
		t.Fatalf("%d bytes answered, budget %d", got*size, limit)
	}
	if lim := fx.count(t, pA2S, oLimited); lim < uint64(n-got) {
		t.Fatalf("rate_limited %d, want %d", lim, n-got)
	}
}

// TestXDPUnprovenBudget: Quake 3 replies (no challenge, larger than the
// request) draw on the unproven budget, and the per-source packet rate
// holds first, both in the program.
func TestXDPUnprovenBudget(t *testing.T) {
	const rate, burst = 1500, 1500 // split among the CPUs; each share's burst is at least 1,500 B
	fx := newFixture(t, responder.Limits{PerIPRate: 1 << 30, PerIPBurst: 1 << 20, UnprovenRate: rate, UnprovenBurst: burst, TrackedIPs: 1024})
	for _, src := range []netip.Addr{cliAddr4, cliAddr4b} {
		c := fx.dial(t, src, srvAddr4)
		start := time.Now()
		const n = 30
		for i := 0; i < n; i++ {
			c.c.Write([]byte("\xFF\xFF\xFF\xFFgetstatus\n"))
		}
		got, size := 0, 0
		buf := make([]byte, 4096)
		for {
			c.c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			k, err := c.c.Read(buf)
			if err != nil {
				break
			}
			got++
			size = k
		}
		elapsed := time.Since(start).Seconds()
		shares := fx.fp.ncpu
		limit := shares*1500 + int(rate*elapsed) + size
		t.Logf("%s: %d of %d answered (%d bytes each) in %.2f s; unproven budget %d bytes", src, got, n, size, elapsed, limit)
		if got*size > limit {
			t.Fatalf("%d bytes answered to an unproven source, budget %d", got*size, limit)
		}
		if got > 10+int(elapsed)+1 {
			t.Fatalf("%d answers: the packet rate (burst 10, 1/s) did not hold", got)
		}
	}
	if fx.count(t, pQ3, oLimited) == 0 {
		t.Fatal("no Quake 3 request counted as rate_limited")
	}
}

// TestXDPNewFailsCleanly: an interface that does not exist is an error
// (the daemon logs it and serves on the socket path), not a panic, and
// leaves nothing loaded.
func TestXDPNewFailsCleanly(t *testing.T) {
	needXDP(t)
	is, err := challenge.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(Config{Interfaces: []string{"qdx-nosuch0"}, Issuer: is})
	if err == nil || f != nil {
		t.Fatalf("New on a missing interface: %v, %v; want an error", f, err)
	}
	t.Log(err)
}

// TestXDPHeldInterface (issue 25): when another XDP program already holds
// the interface (here the tests' pass program, as another queryd's would),
// New fails saying so, in native and in generic mode, not that
// CAP_NET_ADMIN is missing; the other program stays attached.
func TestXDPHeldInterface(t *testing.T) {
	t.Parallel() // namespaces of its own; it mostly waits for replies
	needXDP(t)
	n := newTestNet(t)
	is, err := challenge.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{ModeNative, ModeGeneric} {
		err := inNS(n.cliNS, func() error {
			f, err := New(Config{Interfaces: []string{n.cliIf}, Mode: mode, Issuer: is})
			if err == nil {
				f.close()
			}
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "another XDP program (another queryd?) holds "+n.cliIf) {
			t.Errorf("%v mode on an interface another program holds: %v; want it to say so", mode, err)
		}
		if strings.Contains(fmt.Sprint(err), "CAP_NET_ADMIN") {
			t.Errorf("%v mode: the error blames the capabilities: %v", mode, err)
		}
	}
	if _, err := n.pass.(*Pass).UDP(); err != nil {
		t.Errorf("the other program is gone: %v", err)
	}
}

//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sagl"
	"github.com/queryd/queryd/sqp"
)

// The requests of SQP, Bedrock and SAGL the program answers.
var (
	sqpChallenge = sqp.ChallengeRequest[:]
	// bedrockPing is gamedig's ping (time 11 22 … 88).
	bedrockPing = bedrock.AppendPing(nil, 0x1122334455667788, 0)
)

func sqpQuery(tok uint32, chunks byte) []byte { return sqp.AppendQuery(nil, tok, chunks) }

func saglRequest(kind byte, tok, offset uint32) []byte {
	return sagl.AppendRequest(nil, sagl.Request{Kind: kind, Token: tok, Offset: offset})
}

// sqpToken reads the token of an SQP challenge reply (00 token BE).
func sqpToken(t *testing.T, reply []byte) uint32 {
	t.Helper()
	if len(reply) != sqp.ChallengeLen || reply[0] != sqp.TypeChallenge {
		t.Fatalf("not an SQP challenge: % x", reply)
	}
	return binary.BigEndian.Uint32(reply[1:])
}

// saglToken reads the token of a SAGL challenge ("SAGR" 01 00 00 00 token LE).
func saglToken(t *testing.T, reply []byte) uint32 {
	t.Helper()
	if len(reply) != sagl.ChallengeSize || !bytes.HasPrefix(reply, []byte("SAGR\x01\x00")) {
		t.Fatalf("not a SAGL challenge: % x", reply)
	}
	return binary.LittleEndian.Uint32(reply[8:])
}

// silent asserts that req gets nothing back within wait.
func silent(t *testing.T, c *client, name string, req []byte, wait time.Duration) {
	t.Helper()
	if r := c.ask(t, req, wait); r != nil {
		t.Fatalf("%s: answered % x", name, r)
	}
}

// TestXDPProtocolTokens: SQP's and SAGL's tokens are bound to the address
// and live as in user space, in the program: another address's token gets
// nothing (an SQP query, which the socket path ignores too) or a new
// challenge (SAGL, from the program); a token one epoch old is still good,
// two epochs old (the program's clock moved) the program refuses it the
// same way.
func TestXDPProtocolTokens(t *testing.T) {
	fx := newFixture(t, responder.Limits{})
	a := fx.dial(t, cliAddr4, srvAddr4)
	b := fx.dial(t, cliAddr4b, srvAddr4)
	stok := sqpToken(t, a.ask(t, sqpChallenge, time.Second))
	gtok := saglToken(t, a.ask(t, saglRequest(sagl.KindInfo, 0, 0), time.Second))

	answered := func(proto int, name string, c *client, req []byte) []byte {
		t.Helper()
		before := fx.count(t, proto, oAnswered)
		r := c.ask(t, req, time.Second)
		if r == nil || fx.count(t, proto, oAnswered) != before+1 {
			t.Fatalf("%s: % x, want the program's answer", name, r)
		}
		return r
	}
	// refused: the program does not answer the SQP query (passed: the
	// socket path, on the real clock, ignores it, or answers it when only
	// the program's clock moved) and challenges the SAGL request.
	refused := func(name string, c *client, sockValid bool) {
		t.Helper()
		ans := fx.count(t, pSQP, oAnswered)
		if r := c.ask(t, sqpQuery(stok, sqp.ChunkServerInfo), 300*time.Millisecond); r != nil && !sockValid {
			t.Fatalf("%s: SQP query answered % x", name, r)
		}
		if fx.count(t, pSQP, oAnswered) != ans {
			t.Fatalf("%s: the program answered an SQP query with a refused token", name)
		}
		ch := fx.count(t, pSAGL, oChallenged)
		r := c.ask(t, saglRequest(sagl.KindInfo, gtok, 0), time.Second)
		if saglToken(t, r) == gtok || fx.count(t, pSAGL, oChallenged) != ch+1 {
			t.Fatalf("%s: SAGL info: % x, want the program's challenge with another token", name, r)
		}
	}
	if r := answered(pSQP, "own SQP token", a, sqpQuery(stok, sqp.ChunkServerInfo)); binary.BigEndian.Uint32(r[1:5]) != stok {
		t.Fatalf("SQP reply header % x does not carry the query's token %#x", r[:11], stok)
	}
	answered(pSAGL, "own SAGL token", a, saglRequest(sagl.KindInfo, gtok, 0))
	refused("another address", b, false)

	fx.shiftClock(t, 30*time.Second)
	answered(pSQP, "SQP token one epoch old", a, sqpQuery(stok, sqp.AllChunks))
	answered(pSAGL, "SAGL token one epoch old", a, saglRequest(sagl.KindInfo, gtok, 0))
	fx.shiftClock(t, 60*time.Second)
	refused("two epochs old", a, true)
}

// TestXDPProtocolsPassTheRest: what the program leaves to the socket path
// of SQP and SAGL gets the socket path's answer (or its silence), and the
// program counts none of it: an SQP query for unknown chunks (malformed),
// a SAGL logo piece and a SAGL request of another size (malformed), a
// 33-byte datagram with RakNet's magic and another id (malformed), and 5
// bytes that are not all zero.
func TestXDPProtocolsPassTheRest(t *testing.T) {
	fx := newFixture(t, responder.Limits{})
	c := fx.dial(t, cliAddr4, srvAddr4)
	stok := sqpToken(t, c.ask(t, sqpChallenge, time.Second))
	gtok := saglToken(t, c.ask(t, saglRequest(sagl.KindInfo, 0, 0), time.Second))
	st0, _ := fx.stats()
	badID := append([]byte{}, bedrockPing...)
	badID[0] = 0x03
	for _, tc := range []struct {
		name string
		req  []byte
	}{
		{"SQP unknown chunks", sqpQuery(stok, 0x20)},
		{"SAGL short", saglRequest(sagl.KindInfo, gtok, 0)[:40]},
		{"Bedrock id 03", badID},
		{"SQP 5 bytes not zero", []byte{0, 0, 0, 0, 1}},
	} {
		silent(t, c, tc.name, tc.req, 200*time.Millisecond)
	}
	logo := c.ask(t, saglRequest(sagl.KindLogo, gtok, 0), time.Second)
	if !bytes.HasPrefix(logo, []byte("SAGR\x01\x02")) {
		t.Fatalf("SAGL logo piece: % x, want the socket path's reply", logo)
	}
	st1, _ := fx.stats()
	if st1.Req != st0.Req {
		t.Fatal("the program answered or dropped what it must pass")
	}
	if other := querydPassReasonPASS_OTHER; st1.Passed[other] < st0.Passed[other]+5 {
		t.Fatalf("passed %d datagrams as other, want 5 (all: %v)", st1.Passed[other]-st0.Passed[other], st1.Passed)
	}
	if n := requests(t, fx, "sqp", "malformed") + requests(t, fx, "sagl", "malformed") + requests(t, fx, "bedrock", "malformed"); n != 3 {
		t.Fatalf("the socket path counted %v malformed, want 3", n)
	}
}

// TestXDPBedrockBudgets: the program applies Bedrock's per-source packet
// rate (the default: a burst of 10, then 2 a second) before the pong; and
// the pong, larger than the ping and to a source that proved nothing,
// draws on the unproven budget (here with the packet rate off). Both
// refusals count as rate_limited.
func TestXDPBedrockBudgets(t *testing.T) {
	fx := newFixture(t, responder.Limits{PerIPRate: 1 << 30, PerIPBurst: 1 << 20, UnprovenRate: 1 << 30, UnprovenBurst: 1 << 20, TrackedIPs: 1024})
	c := fx.dial(t, cliAddr4, srvAddr4)
	flood := func(n int) (got, size int, elapsed float64) {
		start := time.Now()
		for i := 0; i < n; i++ {
			c.c.Write(bedrockPing)
		}
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
		return got, size, time.Since(start).Seconds()
	}
	got, size, elapsed := flood(30)
	t.Logf("packet rate: 30 pings, %d pongs (%d bytes each) in %.2f s", got, size, elapsed)
	if got < 10 || got > 10+int(2*elapsed)+1 {
		t.Fatalf("%d pongs: want 10 to %d (burst 10, then 2/s)", got, 10+int(2*elapsed)+1)
	}
	limited := fx.count(t, pBedrock, oLimited)
	if limited != uint64(30-got) {
		t.Fatalf("rate_limited %d, want %d", limited, 30-got)
	}
	if requests(t, fx, "bedrock", "rate_limited") != float64(limited) {
		t.Fatal("queryd_requests_total does not count the program's rate_limited pongs")
	}

	// The unproven budget, the packet rate off: each CPU's share holds
	// 1,500 bytes and refills at 1,500 B/s split among the CPUs.
	const rate = 1500
	fx.fp.SetLimits(testServer, responder.Limits{PerIPRate: 1 << 30, PerIPBurst: 1 << 20, UnprovenRate: rate, UnprovenBurst: 1500, TrackedIPs: 1024})
	protos := append([]module.Protocol(nil), *fx.main().protos.Load()...)
	for i, p := range protos {
		if p.Name() == "bedrock" {
			protos[i] = bedrock.NewHandler(testBedrock, 0, 0)
			protos[i].Update(fx.snap)
		}
	}
	fx.fp.SetProtocols(testServer, protos)
	if err := fx.fp.syncConfig(fx.main()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the shares fill
	const n = 60
	got, size, elapsed = flood(n)
	limit := fx.fp.ncpu*1500 + int(rate*elapsed) + size
	t.Logf("unproven budget: %d pings, %d pongs (%d bytes each) in %.2f s: %d bytes, budget %d", n, got, size, elapsed, got*size, limit)
	if got == 0 || got*size > limit {
		t.Fatalf("%d bytes of pongs to an unproven source, budget %d", got*size, limit)
	}
	if more := fx.count(t, pBedrock, oLimited) - limited; more != uint64(n-got) {
		t.Fatalf("rate_limited grew by %d, want %d", more, n-got)
	}
}

// TestXDPProtocolOffPasses: once SQP, Bedrock and SAGL are no longer among
// the program's protocols (off in the config), it hands over none of their
// replies and passes their datagrams; the socket path, which still serves
// them here, answers.
func TestXDPProtocolOffPasses(t *testing.T) {
	fx := newFixture(t, responder.Limits{})
	c := fx.dial(t, cliAddr4, srvAddr4)
	var keep []module.Protocol
	for _, p := range *fx.main().protos.Load() {
		if n := p.Name(); n != "sqp" && n != "bedrock" && n != "sagl" {
			keep = append(keep, p)
		}
	}
	fx.fp.mu.Lock()
	n := fx.fp.updates
	fx.fp.mu.Unlock()
	fx.fp.SetProtocols(testServer, keep)
	deadline := time.Now().Add(5 * time.Second)
	for {
		fx.fp.mu.Lock()
		done := fx.fp.updates > n
		fx.fp.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replies were not re-published within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	st0, _ := fx.stats()
	for _, tc := range []struct {
		name string
		req  []byte
	}{{"SQP challenge", sqpChallenge}, {"Bedrock ping", bedrockPing}, {"SAGL request", saglRequest(sagl.KindInfo, 0, 0)}} {
		if r := c.ask(t, tc.req, time.Second); r == nil {
			t.Fatalf("%s: no answer from the socket path", tc.name)
		}
	}
	st1, _ := fx.stats()
	if st1.Req != st0.Req {
		t.Fatal("the program answered a protocol it has no replies of")
	}
	if other := querydPassReasonPASS_OTHER; st1.Passed[other] != st0.Passed[other]+3 {
		t.Fatalf("passed %d datagrams, want 3", st1.Passed[other]-st0.Passed[other])
	}
}

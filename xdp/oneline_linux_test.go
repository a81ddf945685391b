//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"bytes"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
)

// echoHeader is a protocol's handler for the program, as a new protocol
// adds one (bpf/NAME.h): "QDECHO" (exactly 6 bytes) gets the module's
// reply, under the protocol's packet rate.
const echoHeader = `// A test protocol: "QDECHO" gets the module's reply.
#ifndef QUERYD_ECHO_H
#define QUERYD_ECHO_H

#include "reply.h"

enum echo_slot {
	ECHO_PONG,
	ECHO_SLOTS,
};

static __always_inline int echo_claim(const struct query *q)
{
	const __u8 *p = q->p;
	return q->r.plen == 6 && has(q, 6) && p[0] == 'Q' && p[1] == 'D' && p[2] == 'E' && p[3] == 'C' &&
	       p[4] == 'H' && p[5] == 'O';
}

static __always_inline int echo_handle(struct query *q, const int v6)
{
	struct reply *body = slot(q, ECHO_PONG);
	if (!body || !body->len)
		return pass(q);
	if (silenced(q))
		return XDP_DROP;
	if (!rate_allow(q)) {
		count(q, OUT_RATE_LIMITED, 0);
		return XDP_DROP;
	}
	return answer(q, v6, OUT_OPEN, body, 0, 0);
}

#endif

PROTOCOL(echo, ECHO_SLOTS)
`

// echoProto is the test protocol's module: its socket path (Claims, Answer)
// and its fast path (FastReplies, PacketLimit), and nothing else.
type echoProto struct{}

var echoReply = []byte("QDPONG")

func (echoProto) Name() string                { return "echo" }
func (echoProto) Claims(p []byte) bool        { return string(p) == "QDECHO" }
func (echoProto) Update(*state.Snapshot)      {}
func (echoProto) PacketLimit() (float64, int) { return 1, 3 }
func (echoProto) Answer(req []byte, _ netip.AddrPort, _ []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	return append(out, echoReply), dgram.AnsweredOpen
}
func (echoProto) FastReplies(_ time.Time, put func(module.FastReply)) {
	put(module.FastReply{Query: "pong", Reply: echoReply, Open: true})
}

// TestXDPOneLine: adding a protocol to the fast path is its handler header
// and one line in bpf/protocols.h. The test builds the program with a new
// protocol, echo (echoHeader, and #include "echo.h" appended to the list),
// and runs it with a module of that name: the program answers its query
// with the module's reply (what the socket path sends), counts it under
// protocol "echo" in both metrics and applies the module's packet rate
// (3 at once, then 1/s) in its own row, while the other protocols answer
// as before. No Go table of package xdp names it.
func TestXDPOneLine(t *testing.T) {
	t.Parallel() // namespaces of its own; it mostly waits for replies
	if testing.Short() {
		t.Skip("builds the program with clang and runs it in network namespaces: -short")
	}
	clang, err := exec.LookPath("clang")
	if err != nil {
		t.Skip("needs clang (the program's compiler): skipped")
	}
	needXDP(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("bpf")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "echo.h"), []byte(echoHeader), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := os.OpenFile(filepath.Join(dir, "protocols.h"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = list.WriteString("#include \"echo.h\"\n") // the one line
	if cerr := list.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "queryd.o")
	cc := exec.Command(clang, "-O2", "-g", "-Wall", "-Werror", "-mcpu=v3", "-nostdinc", "-I"+filepath.Join(dir, "include"),
		"-target", "bpfel", "-c", filepath.Join(dir, "queryd.c"), "-o", obj)
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	object, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	fx := newFixtureWith(t, responder.Limits{}, fixtureOpts{object: object, extra: []module.Protocol{echoProto{}}})
	row, ok := fx.fp.list.row("echo")
	if !ok || row != len(fx.fp.list.rows)-1 {
		t.Fatalf("echo's row: %d, %v; want the list's last", row, ok)
	}
	c := fx.dial(t, cliAddr4, srvAddr4)
	for i := range 3 {
		if r := c.ask(t, []byte("QDECHO"), time.Second); !bytes.Equal(r, echoReply) {
			t.Fatalf("echo %d: % x, want the module's reply", i+1, r)
		}
	}
	if got := fx.count(t, row, oOpen); got != 3 {
		t.Fatalf("the program answered %d echoes, want 3", got)
	}
	if r := c.ask(t, []byte("QDECHO"), 300*time.Millisecond); r != nil || fx.count(t, row, oLimited) != 1 {
		t.Fatalf("a fourth echo at once: % x, %d rate limited; want nothing, 1 (the module's packet rate, 3 at once)", r, fx.count(t, row, oLimited))
	}
	if got := requests(t, fx, "echo", "answered"); got != 3 {
		t.Fatalf(`queryd_requests_total{protocol="echo",outcome="answered"} = %v, want 3`, got)
	}
	if got := metricSum(t, fx.reg, "queryd_xdp_requests_total", map[string]string{"protocol": "echo", "outcome": "rate_limited"}); got != 1 {
		t.Fatalf(`queryd_xdp_requests_total{protocol="echo",outcome="rate_limited"} = %v, want 1`, got)
	}
	fx.setEnabled(t, false)
	if r := c.ask(t, []byte("QDECHO"), time.Second); !bytes.Equal(r, echoReply) {
		t.Fatalf("the socket path: % x", r)
	}
	fx.setEnabled(t, true)
	before := fx.count(t, pA2S, oChallenged)
	if r := c.ask(t, a2sInfo, time.Second); len(r) != 9 || fx.count(t, pA2S, oChallenged) != before+1 {
		t.Fatalf("A2S_INFO beside echo: % x, not the program's challenge", r)
	}
}

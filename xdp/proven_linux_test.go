//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sagl"
)

// oShed is the program's column of the proven-source tier's drops.
var oShed = int(querydOutcomeOUT_UNPROVEN_SHED)

// xdpDrop and xdpTX are the program's verdicts (BPF_PROG_RUN's return).
const (
	xdpDrop = 1
	xdpTX   = 3
)

// tierShapes are the tokenless requests of every protocol the program
// answers, and an A2S_PLAYER with a wrong token: what the gate draws on.
func tierShapes() [][]byte {
	return [][]byte{
		a2sInfo, a2sWithToken('U', []byte{1, 2, 3, 4}), gs4Handshake(), []byte("\xFF\xFF\xFF\xFFgetinfo"),
		[]byte("\xFF\xFF\xFF\xFFgetstatus\n"), sqpChallenge, bedrockPing, saglRequest(sagl.KindInfo, 0, 0),
	}
}

// tierLimits are budgets that never refuse, with a gate of one request a
// second per CPU (burst 4) in the program; the socket path's 2 receive
// loops share the same rate.
func tierLimits(t *testing.T) responder.Limits {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	return responder.Limits{PerIPRate: 1 << 30, PerIPBurst: 1 << 20, UnprovenRate: 1 << 30, UnprovenBurst: 1 << 20, TrackedIPs: 4096,
		UnprovenPacketRate: n, UnprovenPacketBurst: 4 * n, ProvenFor: time.Minute}
}

// TestXDPProvenTier (issue 43): once the gate is spent, a spoofed tokenless
// flood from 1,024 IPv4 and IPv6 sources (every protocol's request shape)
// is dropped by the program (XDP_DROP) before any reply work, counted
// unproven_shed in the program and in queryd_requests_total, while the
// proven clients (IPv4 and IPv6: they returned a token before the flood)
// keep getting their challenges and answers, a new source is dropped, and a
// new source's query with a valid token is answered. With the program off,
// the socket path does the same with the same shapes.
func TestXDPProvenTier(t *testing.T) {
	if testing.Short() {
		t.Skip("network namespaces and a flood: -short")
	}
	fx := newFixtureWith(t, tierLimits(t), fixtureOpts{unbound: true})
	srvMAC := macOf(t, fx.net.srvNS, fx.net.srvIf)
	cliMAC := macOf(t, fx.net.cliNS, fx.net.cliIf)
	toks := map[netip.Addr][]byte{}
	for _, a := range [][2]netip.Addr{{cliAddr4, srvAddr4}, {cliAddr6, srvAddr6}} {
		c := fx.dial(t, a[0], a[1])
		ch := c.ask(t, a2sInfo, time.Second)
		if len(ch) != 9 {
			t.Fatalf("%v: no challenge before the flood: % x", a[0], ch)
		}
		if r := c.ask(t, a2sWithToken('T', ch[5:9]), time.Second); len(r) <= 29 {
			t.Fatalf("%v: no INFO before the flood: % x", a[0], r)
		}
		toks[a[0]] = ch[5:9]
	}
	dst := func(src netip.Addr) netip.Addr {
		if src.Is4() {
			return srvAddr4
		}
		return srvAddr6
	}
	mk := func(src netip.Addr, payload []byte) []byte {
		return frame{dstMAC: srvMAC, srcMAC: cliMAC, src: src, dst: dst(src), payload: payload}.bytes()
	}
	var flood [][]byte
	shapes := tierShapes()
	for i := range 512 {
		v4 := netip.AddrFrom4([4]byte{198, 18, 2 + byte(i>>8), byte(i)})
		v6 := netip.AddrFrom16([16]byte{0xfd, 0, 0x51, 0x64, 0x78, 0x65, byte(i >> 8), byte(i), 15: 1})
		flood = append(flood, mk(v4, shapes[i%len(shapes)]), mk(v6, shapes[(i+3)%len(shapes)]))
	}
	prog, idx := fx.fp.links[0].prog, fx.fp.links[0].index
	run := func(b []byte) uint32 {
		var ret uint32
		err := inNS(fx.net.srvNS, func() (err error) {
			out := make([]byte, 2048)
			ret, err = prog.Run(&ebpf.RunOptions{Data: b, DataOut: out, Context: xdpMD{DataEnd: uint32(len(b)), IngressIfindex: idx}})
			return err
		})
		if err != nil {
			t.Fatalf("BPF_PROG_RUN: %v", err)
		}
		return ret
	}
	shedBefore := metricSum(t, fx.reg, "queryd_requests_total", map[string]string{"outcome": "unproven_shed"})
	drops := 0
	for _, b := range flood {
		if run(b) == xdpDrop {
			drops++
		}
	}
	st, _ := fx.stats()
	var progShed uint64
	for row := range st.Req {
		progShed += st.Req[row][oShed]
	}
	t.Logf("flood of %d frames: %d XDP_DROP, %d counted unproven_shed in the program", len(flood), drops, progShed)
	if drops < len(flood)*9/10 || uint64(drops) != progShed {
		t.Fatalf("flood of %d: %d dropped, %d counted unproven_shed; want at least 90%% dropped, each counted", len(flood), drops, progShed)
	}
	if got := metricSum(t, fx.reg, "queryd_requests_total", map[string]string{"outcome": "unproven_shed"}) - shedBefore; got != float64(progShed) {
		t.Fatalf("queryd_requests_total{outcome=unproven_shed} grew by %v, the program counted %d", got, progShed)
	}
	for src, tok := range toks {
		for _, q := range [][]byte{a2sInfo, a2sWithToken('T', tok)} {
			for _, b := range flood[:64] {
				run(b) // the gate stays spent
			}
			if got := run(mk(src, q)); got != xdpTX {
				t.Fatalf("proven %v: % x got verdict %d during the flood, want XDP_TX", src, q, got)
			}
		}
	}
	for _, src := range []netip.Addr{netip.MustParseAddr("198.18.9.1"), netip.MustParseAddr("fd00:5164:7866::1")} {
		if got := run(mk(src, a2sInfo)); got != xdpDrop {
			t.Fatalf("new source %v got verdict %d during the flood, want XDP_DROP", src, got)
		}
		tok := binary.LittleEndian.AppendUint32(nil, fx.issuer.Token(src))
		if got := run(mk(src, a2sWithToken('T', tok))); got == xdpDrop {
			t.Fatalf("new source %v with a valid token dropped during the flood", src)
		}
	}

	// The socket path, the program off: the same shapes, through the kernel.
	fx.setEnabled(t, false)
	w := fx.openWire(t)
	c := fx.dial(t, cliAddr4, srvAddr4)
	if r := c.ask(t, a2sWithToken('T', toks[cliAddr4]), time.Second); len(r) <= 29 {
		t.Fatalf("socket path: the token query before the flood: % x", r) // proves it to the socket path
	}
	newcomer := fx.dial(t, cliAddr4b, srvAddr4)
	sockBefore := metricSum(t, fx.reg, "queryd_requests_total", map[string]string{"outcome": "unproven_shed"})
	var sockFlood [][]byte
	for i := range 240 {
		sockFlood = append(sockFlood, mk(netip.AddrFrom4([4]byte{198, 18, 0, byte(10 + i)}), shapes[i%len(shapes)]))
	}
	for range 2 {
		for _, b := range sockFlood {
			w.send(t, b)
		}
		if r := c.ask(t, a2sInfo, 2*time.Second); len(r) != 9 {
			t.Fatalf("socket path: the proven client's challenge request during the flood: % x", r)
		}
		for _, b := range sockFlood[:64] {
			w.send(t, b)
		}
		if r := c.ask(t, a2sWithToken('T', toks[cliAddr4]), 2*time.Second); len(r) <= 29 {
			t.Fatalf("socket path: the proven client's token query during the flood: % x", r)
		}
		for _, b := range sockFlood[:64] {
			w.send(t, b)
		}
		if r := newcomer.ask(t, a2sInfo, 300*time.Millisecond); r != nil {
			t.Fatalf("socket path: a new source answered during the flood: % x", r)
		}
	}
	sent := 2 * (240 + 128)
	got := metricSum(t, fx.reg, "queryd_requests_total", map[string]string{"outcome": "unproven_shed"}) - sockBefore
	t.Logf("socket path: %v of %d flood datagrams shed", got, sent)
	if got < float64(sent)*0.9 {
		t.Fatalf("socket path: %v of %d flood datagrams shed", got, sent)
	}
}

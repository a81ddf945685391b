//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"bytes"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sagl"
)

// TestDivertWholeShape (issue 39 item 7): divert takes a datagram only when
// it is a whole request of a protocol it takes, not when its first bytes
// look like one. Game datagrams that begin as a query does (a Quake 3
// client's datagram whose sequence number starts FE FD, SAGQ, five zero
// bytes, FF FF FF FF T, getinfo run into another word, a RakNet datagram
// with the ping's length and magic but another id) pass untouched to the
// game server, counted as passed, never seen by the parse path. With
// takes = quake3, an A2S_INFO passes as well and a getinfo is still taken.
func TestDivertWholeShape(t *testing.T) {
	t.Parallel() // namespaces of its own; it mostly waits for replies
	fx, game, w, srvMAC, cliMAC := newDivertWire(t)
	frameOf := func(p []byte) []byte {
		return frame{dstMAC: srvMAC, srcMAC: cliMAC, src: cliAddr4, dst: srvAddr4, payload: p}.bytes()
	}
	// q3client is a Quake 3 client's game datagram: sequence (LE), qport,
	// then its commands; a sequence ending FD FE is FE FD on the wire.
	q3client := func(n int) []byte {
		p := []byte{0xFE, 0xFD, 0x00, 0x00, 0x39, 0x30}
		return append(p, bytes.Repeat([]byte{0x5A}, n-len(p))...)
	}
	rakMagic := bedrockPing[9:25]
	game11 := append(q3client(11), []byte{}...)
	game11[2] = 0x09
	games := []struct {
		name string
		p    []byte
	}{
		{"Quake 3 client datagram starting FE FD (24 bytes)", q3client(24)},
		{"Quake 3 client datagram starting FE FD 09 (11 bytes)", game11},
		{"Quake 3 client datagram starting FE FD 00 (7 bytes)", q3client(7)},
		{"SAGQ and 20 bytes", append([]byte("SAGQ"), bytes.Repeat([]byte{1}, 20)...)},
		{"SAGQ, 64 bytes, version 2", func() []byte { p := saglRequest(sagl.KindInfo, 0, 0); p[4] = 2; return p }()},
		{"five zero bytes and more", make([]byte, 12)},
		{"FF FF FF FF T and no engine string", []byte("\xFF\xFF\xFF\xFFT\x01\x02\x03\x04")},
		{"FF FF FF FF T, the engine string cut short", []byte("\xFF\xFF\xFF\xFFTSource Engine Que")},
		{"FF FF FF FF U and 10 bytes", []byte("\xFF\xFF\xFF\xFFU\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a")},
		{"FF FF FF FF getinfoX", []byte("\xFF\xFF\xFF\xFFgetinfoX")},
		{"FF FF FF FF getstatusResponse", []byte("\xFF\xFF\xFF\xFFgetstatusResponse\n")},
		{"RakNet magic, ping length, id 0x1c", append(append(append([]byte{0x1c}, make([]byte, 8)...), rakMagic...), make([]byte, 8)...)},
	}
	passes := func(dv *Divert, name string, p []byte) {
		t.Helper()
		before, st0 := mustCounts(t, dv), mustStats(t, fx)
		w.replies(t, frameOf(p), 200*time.Millisecond) // the socket path holds the game port too here: it may answer
		got, st1 := mustCounts(t, dv), mustStats(t, fx)
		if got.Passed != before.Passed+1 || got.XDP != before.XDP || got.Socket != before.Socket || got.Dropped != before.Dropped {
			t.Errorf("%s: diverted %+v → %+v, want one more passed untouched to the game server", name, before, got)
		}
		if st1.Req != st0.Req || st1.Passed != st0.Passed {
			t.Errorf("%s: the parse path saw it", name)
		}
	}
	taken := func(dv *Divert, name string, p []byte) {
		t.Helper()
		before := mustCounts(t, dv)
		if n := w.replies(t, frameOf(p), 300*time.Millisecond); n != 1 {
			t.Errorf("%s: %d replies, want 1", name, n)
		}
		if got := mustCounts(t, dv); got.XDP != before.XDP+1 || got.Passed != before.Passed {
			t.Errorf("%s: diverted %+v → %+v, want one more answered by the program", name, before, got)
		}
	}

	dv, err := fx.divert(testServer, []DivertAddr{{Game: game, Hidden: testPort}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		name string
		p    []byte
	}{{"A2S_INFO", a2sInfo}, {"GameSpy4 handshake", gs4Handshake()}, {"getinfo", []byte("\xFF\xFF\xFF\xFFgetinfo")}, {"getstatus\\n", []byte("\xFF\xFF\xFF\xFFgetstatus\n")}, {"SQP challenge", sqpChallenge}, {"Bedrock ping", bedrockPing}, {"SAGL info", saglRequest(sagl.KindInfo, 0, 0)}} {
		taken(dv, "every protocol on: "+q.name, q.p)
	}
	for _, g := range games {
		passes(dv, "every protocol on: "+g.name, g.p)
	}
	if err := dv.Close(); err != nil {
		t.Fatal(err)
	}

	dv, err = fx.divert(testServer, []DivertAddr{{Game: game, Hidden: testPort}}, []string{"quake3"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dv.Close() })
	taken(dv, "quake3 only: getinfo", []byte("\xFF\xFF\xFF\xFFgetinfo"))
	for _, q := range []struct {
		name string
		p    []byte
	}{{"A2S_INFO", a2sInfo}, {"GameSpy4 handshake", gs4Handshake()}, {"SQP challenge", sqpChallenge}, {"SAGL info", saglRequest(sagl.KindInfo, 0, 0)}} {
		passes(dv, "quake3 only: "+q.name, q.p)
	}
	// the takes survive a reload (SetProtocols rewrites the mask)
	fx.fp.SetProtocols(testServer, testProtocols(fx.issuer))
	passes(dv, "quake3 only, after SetProtocols: A2S_INFO", a2sInfo)
	// a protocol that is off is not taken, even when listed
	fx.fp.SetProtocols(testServer, testProtocols(fx.issuer)[:2]) // a2s, gamespy4
	passes(dv, "quake3 listed but off: getinfo", []byte("\xFF\xFF\xFF\xFFgetinfo"))
}

func mustCounts(t *testing.T, dv *Divert) DivertCounts {
	t.Helper()
	c, err := dv.Counts()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newDivertWire is the divert frame tests' start: a fixture whose server
// answered a socket's A2S_INFO (the neighbour known), the game server's
// address on it, a raw wire on the client's side and both ends' MACs.
func newDivertWire(t *testing.T) (fx *fixture, game netip.AddrPort, w *rawWire, srvMAC, cliMAC net.HardwareAddr) {
	t.Helper()
	fx = newFixture(t, responder.Limits{})
	game = netip.AddrPortFrom(srvAddr4, testPort)
	w = fx.openWire(t)
	srvMAC = macOf(t, fx.net.srvNS, fx.net.srvIf)
	cliMAC = macOf(t, fx.net.cliNS, fx.net.cliIf)
	if fx.dial(t, cliAddr4, srvAddr4).ask(t, a2sInfo, time.Second) == nil {
		t.Fatal("no answer to a socket's A2S_INFO")
	}
	return fx, game, w, srvMAC, cliMAC
}

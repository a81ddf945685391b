package gamespy4

import (
	"bytes"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/queryd/queryd/dgram"
)

const scratchSize = MaxPacket // the least scratch the responder may hand Answer

func serve(h *Handler, req []byte, src netip.AddrPort) ([][]byte, dgram.Outcome) {
	return h.Answer(req, src, make([]byte, scratchSize), nil)
}

// handshake asks h for a token as src and checks the reply's framing.
func handshake(t *testing.T, h *Handler, session [4]byte, src netip.AddrPort) uint32 {
	t.Helper()
	req := append([]byte{0xFE, 0xFD, 0x09}, session[:]...)
	out, oc := serve(h, req, src)
	if oc != dgram.Challenged || len(out) != 1 {
		t.Fatalf("handshake: outcome %v, %d datagrams", oc, len(out))
	}
	tok, err := ParseHandshake(out[0], session)
	if err != nil {
		t.Fatalf("handshake reply % x: %v", out[0], err)
	}
	return tok
}

func TestHandshakeExactBytes(t *testing.T) {
	h, _ := newTestHandler(t, wikiConfig, wikiSnapshot())
	out, oc := serve(h, unhex(t, "FE FD 09 00 00 00 01"), clientA)
	if oc != dgram.Challenged || len(out) != 1 {
		t.Fatalf("outcome %v, %d datagrams", oc, len(out))
	}
	tok := WireToken(h.issuer.Token(clientA.Addr()))
	want := append(unhex(t, "09 00 00 00 01"), strconv.FormatUint(uint64(tok), 10)...)
	want = append(want, 0)
	if !bytes.Equal(out[0], want) {
		t.Fatalf("reply % x, want % x", out[0], want)
	}
	if len(out[0]) < 12 || len(out[0]) > 16 {
		t.Fatalf("reply of %d bytes, want 12 to 16 (6 to 10 digits)", len(out[0]))
	}
}

func TestWireTokenRange(t *testing.T) {
	for _, in := range []uint32{0, 1, 99999, 100000, 1<<31 - 1, 1 << 31, 0xFFFFFFFE, 0xFFFFFFFF, 0x5A5A5A5A} {
		w := WireToken(in)
		if w < TokenMin || w > TokenMax {
			t.Fatalf("WireToken(%d) = %d, outside [%d, %d]", in, w, TokenMin, TokenMax)
		}
		if s := strconv.FormatUint(uint64(w), 10); len(s) < 6 {
			t.Fatalf("WireToken(%d) = %s: fewer than 6 digits", in, s)
		}
	}
	if WireToken(0) != TokenMin || WireToken(TokenMax-TokenMin) != TokenMax || WireToken(TokenMax-TokenMin+1) != TokenMin {
		t.Fatal("WireToken does not wrap [TokenMin, TokenMax]")
	}
}

func TestSessionEchoedExactly(t *testing.T) {
	h, _ := newTestHandler(t, wikiConfig, wikiSnapshot())
	for _, s := range [][4]byte{{0, 0, 0, 0}, {0xFF, 0xFF, 0xFF, 0xFF}, {0x10, 0x20, 0x30, 0x40}, {0x80, 0, 0, 1}} {
		tok := handshake(t, h, s, clientA)
		req := append([]byte{0xFE, 0xFD, 0x00}, s[:]...)
		req = append(req, byte(tok>>24), byte(tok>>16), byte(tok>>8), byte(tok))
		out, oc := serve(h, req, clientA)
		if oc != dgram.Answered || len(out) != 1 || !bytes.Equal(out[0][1:5], s[:]) {
			t.Fatalf("session % x: outcome %v, reply % x", s, oc, out)
		}
	}
}

func TestStatFlow(t *testing.T) {
	h, _ := newTestHandler(t, wikiConfig, wikiSnapshot())
	s := [4]byte{0, 0, 0, 1}
	tok := handshake(t, h, s, clientA)
	basicReq := withToken(unhex(t, "FE FD 00 00 00 00 01 00 00 00 00"), tok)
	out, oc := serve(h, basicReq, clientA)
	want := append(unhex(t, "00 00 00 00 01"), unhex(t, wikiBasic)...)
	if oc != dgram.Answered || len(out) != 1 || !bytes.Equal(out[0], want) {
		t.Fatalf("basic: outcome %v, reply % x\nwant % x", oc, out, want)
	}
	for _, pad := range []string{"00 00 00 00", "FF FF FF 01", "12 34 56 78"} {
		out, oc = serve(h, append(append([]byte{}, basicReq...), unhex(t, pad)...), clientA)
		want = append(unhex(t, "00 00 00 00 01"), unhex(t, wikiFull)...)
		if oc != dgram.Answered || len(out) != 1 || !bytes.Equal(out[0], want) {
			t.Fatalf("full (padding %s): outcome %v, reply %q\nwant %q", pad, oc, out, want)
		}
	}
}

func TestTokenEpochs(t *testing.T) {
	h, clk := newTestHandler(t, wikiConfig, wikiSnapshot())
	s := [4]byte{1, 2, 3, 4}
	tok := handshake(t, h, s, clientA)
	req := withToken(unhex(t, "FE FD 00 01 02 03 04 00 00 00 00"), tok)
	steps := []struct {
		advance time.Duration
		want    dgram.Outcome
	}{
		{0, dgram.Answered},
		{30 * time.Second, dgram.Answered}, // the previous epoch's token
		{30 * time.Second, dgram.Ignored},  // two epochs old: expired
	}
	for i, st := range steps {
		clk.t = clk.t.Add(st.advance)
		out, oc := serve(h, req, clientA)
		if oc != st.want || (oc == dgram.Ignored) != (len(out) == 0) {
			t.Fatalf("step %d: outcome %v with %d datagrams, want %v", i, oc, len(out), st.want)
		}
	}
}

func TestWrongTokenGetsNothing(t *testing.T) {
	h, _ := newTestHandler(t, wikiConfig, wikiSnapshot())
	s := [4]byte{1, 2, 3, 4}
	tok := handshake(t, h, s, clientA)
	base := unhex(t, "FE FD 00 01 02 03 04 00 00 00 00")
	for name, req := range map[string][]byte{
		"wrong token":       withToken(base, tok+1),
		"zero token":        withToken(base, 0),
		"raw issuer token":  withToken(base, h.issuer.Token(clientA.Addr())),
		"other IP's token":  withToken(base, handshake(t, h, s, clientB)),
		"full, wrong token": append(withToken(base, tok^0x55), 0, 0, 0, 0),
	} {
		out, oc := serve(h, req, clientA)
		if oc != dgram.Ignored || len(out) != 0 {
			t.Errorf("%s: outcome %v, %d datagrams; want ignored, nothing", name, oc, len(out))
		}
	}
}

func TestMalformed(t *testing.T) {
	h, _ := newTestHandler(t, wikiConfig, wikiSnapshot())
	for name, hx := range map[string]string{
		"empty":              "",
		"magic only":         "FE FD",
		"no session":         "FE FD 09",
		"short session":      "FE FD 09 00 00 01",
		"stat without token": "FE FD 00 00 00 00 01",
		"stat short token":   "FE FD 00 00 00 00 01 00 01 02",
		"unknown type":       "FE FD 01 00 00 00 01 00 00 00 00",
		"unknown type 0xFF":  "FE FD FF 00 00 00 01",
		"wrong magic":        "FE FE 09 00 00 00 01",
		"garbage":            "47 45 54 20 2F 20 48 54 54 50",
		"a2s header":         "FF FF FF FF 54",
	} {
		out, oc := serve(h, unhex(t, hx), clientA)
		if oc != dgram.Malformed || len(out) != 0 {
			t.Errorf("%s: outcome %v, %d datagrams; want malformed, nothing", name, oc, len(out))
		}
	}
}

func TestLongRequestsAccepted(t *testing.T) {
	h, _ := newTestHandler(t, wikiConfig, wikiSnapshot())
	s := [4]byte{0, 0, 0, 1}
	long := append(unhex(t, "FE FD 09 00 00 00 01"), make([]byte, 100)...)
	out, oc := serve(h, long, clientA)
	if oc != dgram.Challenged || len(out) != 1 {
		t.Fatalf("long handshake: outcome %v", oc)
	}
	tok, err := ParseHandshake(out[0], s)
	if err != nil {
		t.Fatal(err)
	}
	base := withToken(unhex(t, "FE FD 00 00 00 00 01 00 00 00 00"), tok)
	for n, full := range map[int]bool{11: false, 12: false, 14: false, 15: true, 16: true, 200: true} {
		req := append(append([]byte{}, base...), make([]byte, n-11)...)
		out, oc := serve(h, req, clientA)
		if oc != dgram.Answered || len(out) != 1 {
			t.Fatalf("%d-byte stat: outcome %v", n, oc)
		}
		if isFull := bytes.HasPrefix(out[0][5:], splitnumHeader); isFull != full {
			t.Fatalf("%d-byte stat: full %v, want %v", n, isFull, full)
		}
	}
}

// TestClientVectors replays the requests real clients sent: handshakes are
// answered with their session id; stats carry another run's token, so they
// get nothing, and with this run's token the reply their length asks for.
func TestClientVectors(t *testing.T) {
	h, _ := newTestHandler(t, wikiConfig, wikiSnapshot())
	for _, v := range loadVectors(t) {
		var s [4]byte
		copy(s[:], v.req[3:7])
		switch v.req[2] {
		case TypeHandshake:
			out, oc := serve(h, v.req, clientA)
			if oc != dgram.Challenged || len(out) != 1 || !bytes.Equal(out[0][1:5], s[:]) {
				t.Fatalf("%s: handshake % x: outcome %v, reply % x", v.probe, v.req, oc, out)
			}
		case TypeStat:
			if out, oc := serve(h, v.req, clientA); oc != dgram.Ignored || len(out) != 0 {
				t.Fatalf("%s: stale token: outcome %v", v.probe, oc)
			}
			tok := handshake(t, h, s, clientA)
			out, oc := serve(h, withToken(v.req, tok), clientA)
			if oc != dgram.Answered || len(out) != 1 {
				t.Fatalf("%s: stat % x: outcome %v", v.probe, v.req, oc)
			}
			if len(v.req) == FullLen {
				_, err := ParseFull(out[0], s)
				if err != nil {
					t.Fatalf("%s: full stat: %v", v.probe, err)
				}
			} else if _, err := ParseBasic(out[0], s); err != nil {
				t.Fatalf("%s: basic stat: %v", v.probe, err)
			}
		default:
			t.Fatalf("%s: vector of type %#x", v.probe, v.req[2])
		}
	}
}

func TestNothingBeforeUpdate(t *testing.T) {
	h, _ := newTestHandler(t, wikiConfig, nil)
	if out, oc := serve(h, unhex(t, "FE FD 09 00 00 00 01"), clientA); oc != dgram.Ignored || len(out) != 0 {
		t.Fatalf("outcome %v before the first snapshot", oc)
	}
}

func TestClaims(t *testing.T) {
	h, _ := newTestHandler(t, wikiConfig, nil)
	for hx, want := range map[string]bool{
		"FE FD": true, "FE FD 09 00 00 00 01": true, "FE": false, "": false,
		"FF FF FF FF 54": false, "FD FE 09": false, "53 41 47 51": false,
	} {
		if got := h.Claims(unhex(t, hx)); got != want {
			t.Errorf("Claims(%s) = %v, want %v", hx, got, want)
		}
	}
}

func TestUpdateReencodes(t *testing.T) {
	h, _ := newTestHandler(t, wikiConfig, wikiSnapshot())
	snap := wikiSnapshot()
	snap.Map = "world_nether"
	h.Update(snap)
	s := [4]byte{9, 9, 9, 9}
	tok := handshake(t, h, s, clientA)
	out, _ := serve(h, withToken(unhex(t, "FE FD 00 09 09 09 09 00 00 00 00"), tok), clientA)
	b, err := ParseBasic(out[0], s)
	if err != nil || b.Map != "world_nether" {
		t.Fatalf("after Update: map %q, err %v", b.Map, err)
	}
}

func TestAnswerAllocatesNothing(t *testing.T) {
	h, _ := newTestHandler(t, wikiConfig, wikiSnapshot())
	scratch := make([]byte, scratchSize)
	out := make([][]byte, 0, 4)
	tok := WireToken(h.issuer.Token(clientA.Addr()))
	reqs := map[string][]byte{
		"handshake": unhex(t, "FE FD 09 00 00 00 01"),
		"basic":     withToken(unhex(t, "FE FD 00 00 00 00 01 00 00 00 00"), tok),
		"full":      withToken(unhex(t, "FE FD 00 00 00 00 01 00 00 00 00 FF FF FF 01"), tok),
		"malformed": unhex(t, "FE FD 42"),
	}
	for name, req := range reqs {
		if n := testing.AllocsPerRun(100, func() { h.Answer(req, clientA, scratch, out[:0]) }); n != 0 {
			t.Errorf("%s: %v allocations per Answer", name, n)
		}
	}
}

package sagl

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/queryd/queryd/dgram"
)

func newHandler(t testing.TB, doc string, logo *Logo) *Handler {
	h := NewHandler(Config{}, testIssuer())
	h.Publish(snapOf(t, doc), logo)
	return h
}

func serve(h *Handler, p []byte, src netip.AddrPort) ([][]byte, dgram.Outcome) {
	return h.Answer(p, src, make([]byte, 2048), nil)
}

func TestAnswerChallenge(t *testing.T) {
	h := newHandler(t, exampleDoc, nil)
	tok := testIssuer().Token(testSrc.Addr())
	want := binary.LittleEndian.AppendUint32([]byte{'S', 'A', 'G', 'R', 1, 0, 0, 0}, tok)
	for name, p := range map[string][]byte{
		"info, token 0":       req(KindInfo, 0, 0),
		"logo, token 0":       req(KindLogo, 0, 0),
		"info, wrong token":   req(KindInfo, tok+1, 0),
		"logo past the end":   req(KindLogo, 0, 1<<20), // unproven: challenged first
		"another IP's token":  req(KindInfo, testIssuer().Token(netip.MustParseAddr("127.0.0.2")), 0),
		"token 0xFFFFFFFF":    req(KindInfo, 0xFFFFFFFF, 0),
		"info, other padding": with(req(KindInfo, 0, 0), 40, 9),
	} {
		out, o := serve(h, p, testSrc)
		if o != dgram.Challenged || len(out) != 1 || !bytes.Equal(out[0], want) {
			t.Errorf("%s: %v % x, want challenged % x", name, o, out, want)
		}
	}
}

func TestAnswerInfo(t *testing.T) {
	h := newHandler(t, manyPlayers(1000), nil)
	tok := testIssuer().Token(testSrc.Addr())
	out, o := serve(h, req(KindInfo, tok, 0), testSrc)
	js, serial := h.JSON()
	if o != dgram.Answered || len(out) != (len(js)+PartSize-1)/PartSize || len(out) < 40 {
		t.Fatalf("%v with %d parts for %d bytes of JSON", o, len(out), len(js))
	}
	var all []byte
	for i, d := range out {
		if len(d) > MaxDatagram {
			t.Fatalf("part %d is %d bytes", i, len(d))
		}
		hd := binary.LittleEndian
		if hd.Uint32(d[8:]) != serial || hd.Uint32(d[12:]) != uint32(len(js)) ||
			hd.Uint16(d[16:]) != uint16(i) || hd.Uint16(d[18:]) != uint16(len(out)) {
			t.Fatalf("part %d header % x", i, d[:InfoHeader])
		}
		all = append(all, d[InfoHeader:]...)
	}
	if !bytes.Equal(all, js) {
		t.Fatal("the parts do not add up to the JSON")
	}
	// the previous epoch's token still works; the IPv4-mapped form is the same client
	mapped := netip.AddrPortFrom(netip.AddrFrom16(testSrc.Addr().As16()), 1)
	if _, o := serve(h, req(KindInfo, tok, 0), mapped); o != dgram.Answered {
		t.Fatalf("IPv4-mapped source: %v", o)
	}
}

func TestAnswerLogo(t *testing.T) {
	logo := testLogo(t)
	h := newHandler(t, exampleDoc, logo)
	tok := testIssuer().Token(testSrc.Addr())
	for _, off := range []uint32{0, 1024, 2048, 3072, 1, 3697} {
		out, o := serve(h, req(KindLogo, tok, off), testSrc)
		if o != dgram.Answered || len(out) != 1 || !bytes.Equal(out[0], AppendLogoPiece(nil, logo, off)) {
			t.Errorf("offset %d: %v, %d datagrams", off, o, len(out))
		}
	}
	for _, off := range []uint32{3698, 4096, 1 << 31, 0xFFFFFFFF} {
		if out, o := serve(h, req(KindLogo, tok, off), testSrc); o != dgram.Malformed || len(out) != 0 {
			t.Errorf("offset %d past the end: %v, %d datagrams", off, o, len(out))
		}
	}
	none := newHandler(t, exampleDoc, nil)
	out, o := serve(none, req(KindLogo, tok, 0), testSrc)
	if o != dgram.Answered || len(out) != 1 || !bytes.Equal(out[0], AppendLogoPiece(nil, nil, 0)) {
		t.Errorf("no logo: %v % x", o, out)
	}
	if _, o := serve(none, req(KindLogo, tok, 1024), testSrc); o != dgram.Malformed {
		t.Errorf("no logo, offset 1024: %v", o)
	}
}

func TestAnswerMalformed(t *testing.T) {
	h := newHandler(t, exampleDoc, nil)
	tok := testIssuer().Token(testSrc.Addr())
	for name, p := range map[string][]byte{
		"short":     req(KindInfo, tok, 0)[:12],
		"long":      append(req(KindInfo, tok, 0), 0),
		"version 2": with(req(KindInfo, tok, 0), 4, 2),
		"kind 0":    with(req(KindInfo, tok, 0), 5, 0),
		"kind 7":    with(req(KindInfo, tok, 0), 5, 7),
	} {
		if out, o := serve(h, p, testSrc); o != dgram.Malformed || len(out) != 0 {
			t.Errorf("%s: %v, %d datagrams", name, o, len(out))
		}
	}
	if out, o := serve(NewHandler(Config{}, testIssuer()), req(KindInfo, 0, 0), testSrc); o != dgram.Ignored || len(out) != 0 {
		t.Errorf("before the first snapshot: %v", o)
	}
}

func TestSerialFollowsJSON(t *testing.T) {
	st := newStore(t, exampleDoc)
	h := NewHandler(Config{}, testIssuer())
	h.Update(st.Snapshot())
	js1, s1 := h.JSON()
	if _, err := st.Patch(map[string]any{"map": "Paleto Bay"}); err != nil { // not in the JSON
		t.Fatal(err)
	}
	h.Update(st.Snapshot())
	if js, s := h.JSON(); s != s1 || !bytes.Equal(js, js1) {
		t.Fatalf("serial %08x -> %08x without a JSON change", s1, s)
	}
	if _, err := st.Patch(map[string]any{"description": "Event tonight at 8!"}); err != nil {
		t.Fatal(err)
	}
	h.Update(st.Snapshot())
	js2, s2 := h.JSON()
	if s2 == s1 || bytes.Equal(js2, js1) {
		t.Fatalf("serial %08x kept across a JSON change", s1)
	}
	h.Publish(st.Snapshot(), testLogo(t))
	if _, s3 := h.JSON(); s3 == s2 {
		t.Fatal("serial kept when the logo changed")
	}
	h.Update(st.Snapshot()) // Update keeps the published logo
	if h.Logo() == nil {
		t.Fatal("Update dropped the logo")
	}
}

func FuzzAnswer(f *testing.F) {
	h := newHandler(f, exampleDoc, testLogo(f))
	tok := testIssuer().Token(testSrc.Addr())
	f.Add(req(KindInfo, tok, 0))
	f.Add(req(KindLogo, tok, 3000))
	f.Add(req(KindLogo, 0, 0))
	f.Add([]byte("SAGQ\x01"))
	scratch := make([]byte, 2048)
	f.Fuzz(func(t *testing.T, p []byte) {
		out, o := h.Answer(p, testSrc, scratch, nil)
		size := 0
		for _, d := range out {
			if len(d) > MaxDatagram {
				t.Fatalf("datagram of %d bytes", len(d))
			}
			size += len(d)
		}
		if o != dgram.Answered && size >= len(p) && size > 0 {
			t.Fatalf("unproven reply of %d bytes to %d", size, len(p))
		}
	})
}

func benchHandler(b *testing.B) (*Handler, uint32) {
	doc := manyPlayers(64)
	h := newHandler(b, doc, testLogo(b))
	return h, testIssuer().Token(testSrc.Addr())
}

func benchAnswer(b *testing.B, h *Handler, p []byte, want dgram.Outcome) {
	scratch, out := make([]byte, 2048), make([][]byte, 0, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var o dgram.Outcome
		out, o = h.Answer(p, testSrc, scratch, out[:0])
		if o != want {
			b.Fatalf("outcome %v", o)
		}
	}
}

func BenchmarkAnswerInfo64Players(b *testing.B) {
	h, tok := benchHandler(b)
	benchAnswer(b, h, req(KindInfo, tok, 0), dgram.Answered)
}

func BenchmarkAnswerLogoPiece(b *testing.B) {
	h, tok := benchHandler(b)
	benchAnswer(b, h, req(KindLogo, tok, 1024), dgram.Answered)
}

func BenchmarkAnswerLogoPieceUnaligned(b *testing.B) {
	h, tok := benchHandler(b)
	benchAnswer(b, h, req(KindLogo, tok, 1000), dgram.Answered)
}

func BenchmarkAnswerChallenge(b *testing.B) {
	h, _ := benchHandler(b)
	benchAnswer(b, h, req(KindInfo, 0, 0), dgram.Challenged)
}

// BenchmarkPublish1000Players is the cost of one state change: the JSON and
// its parts for 1,000 players (Update runs once per snapshot, not per query).
func BenchmarkPublish1000Players(b *testing.B) {
	snap := snapOf(b, manyPlayers(1000))
	logo := testLogo(b)
	h := NewHandler(Config{}, testIssuer())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h.enc.Store(nil) // encode afresh every time
		h.Publish(snap, logo)
	}
}

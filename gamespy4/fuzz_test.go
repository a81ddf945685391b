package gamespy4

import (
	"errors"
	"testing"

	"github.com/queryd/queryd/dgram"
)

// FuzzParseRequest: any datagram parses or errs without panicking, the
// handler answers it with at most one datagram of at most MaxPacket bytes,
// and only well-formed requests get an answer.
func FuzzParseRequest(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(v.req)
	}
	f.Add([]byte{})
	f.Add([]byte{0xFE, 0xFD})
	f.Add([]byte{0xFE, 0xFD, 0x09, 1, 2, 3})
	f.Add([]byte{0xFE, 0xFD, 0x00, 1, 2, 3, 4, 5, 6, 7})
	h, _ := newTestHandler(f, wikiConfig, wikiSnapshot())
	scratch := make([]byte, scratchSize)
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := ParseRequest(p)
		if err == nil {
			if !Claims(p) || (r.Type != TypeHandshake && r.Type != TypeStat) {
				t.Fatalf("parsed % x as %+v", p, r)
			}
			if r.Type == TypeHandshake && len(p) < HandshakeLen || r.Type == TypeStat && len(p) < BasicLen {
				t.Fatalf("parsed a short request % x", p)
			}
		}
		out, oc := h.Answer(p, clientA, scratch, nil)
		if len(out) > 1 || len(out) == 1 && len(out[0]) > MaxPacket {
			t.Fatalf("% x: %d datagrams", p, len(out))
		}
		if err != nil && (oc != dgram.Malformed || len(out) != 0) {
			t.Fatalf("% x: unparsable but outcome %v", p, oc)
		}
	})
}

// FuzzParseReplies: the client's reply parsers never panic on any datagram.
func FuzzParseReplies(f *testing.F) {
	h, _ := newTestHandler(f, wikiConfig, wikiSnapshot())
	tok := WireToken(h.issuer.Token(clientA.Addr()))
	for _, hx := range []string{
		"FE FD 09 00 00 00 01",
		"FE FD 00 00 00 00 01 00 00 00 00",
		"FE FD 00 00 00 00 01 00 00 00 00 00 00 00 00",
	} {
		req := unhex(f, hx)
		if req[2] == TypeStat {
			req = withToken(req, tok)
		}
		out, _ := h.Answer(req, clientA, make([]byte, scratchSize), nil)
		f.Add(out[0])
	}
	f.Add([]byte{0, 0, 0, 0, 1})
	session := [4]byte{0, 0, 0, 1}
	f.Fuzz(func(t *testing.T, p []byte) {
		_, err1 := ParseHandshake(p, session)
		_, err2 := ParseBasic(p, session)
		full, err3 := ParseFull(p, session)
		if err3 == nil && (full.Keys == nil || full.Players == nil) {
			t.Fatalf("% x: full stat without its sections", p)
		}
		var bad *BadAnswerError
		for _, err := range []error{err1, err2, err3} {
			if err != nil && !errors.As(err, &bad) {
				t.Fatalf("% x: %v is not a BadAnswerError", p, err)
			}
		}
	})
}

package sqp

import (
	"errors"
	"testing"

	"github.com/queryd/queryd/dgram"
)

// FuzzParseRequest: any datagram parses or errs without panicking; only
// claimed datagrams parse; the handler answers at most MaxPackets datagrams
// of at most MaxPacket bytes, never more than the request to an unproven
// source, and nothing to what it cannot parse.
func FuzzParseRequest(f *testing.F) {
	for _, name := range []string{"challenge_success_request", "info_single_request", "info_multi_request", "rules_request", "player_request", "team_request"} {
		f.Add(vector(f, name))
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0, 1, 0, 1, 0xFF})
	h, _ := newTestHandler(f, Config{}, manyPlayers(300, 100))
	tok := h.issuer.Token(clientA.Addr())
	for c := 0; c <= AllChunks; c++ {
		f.Add(AppendQuery(nil, tok, byte(c)))
	}
	scratch := make([]byte, MaxReply)
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := ParseRequest(p)
		if err == nil && (!Claims(p) || r.Type != TypeChallenge && r.Type != TypeQuery || r.Chunks&^AllChunks != 0) {
			t.Fatalf("parsed % x as %+v", p, r)
		}
		out, oc := h.Answer(p, clientA, scratch, nil)
		size := 0
		for _, d := range out {
			size += len(d)
			if len(d) > MaxPacket {
				t.Fatalf("% x: a datagram of %d bytes", p, len(d))
			}
		}
		if len(out) > MaxPackets || !oc.Proven() && size > len(p) {
			t.Fatalf("% x: %d datagrams, %d bytes, outcome %v", p, len(out), size, oc)
		}
		if err != nil && (oc != dgram.Malformed || len(out) != 0) {
			t.Fatalf("% x: unparsable but outcome %v", p, oc)
		}
	})
}

// FuzzParseReplies: the client's reply parsers never panic on any packet
// or payload, and every error is a *BadAnswerError.
func FuzzParseReplies(f *testing.F) {
	for _, name := range []string{"info_single_response", "info_single_malformed_response", "info_multi_response_000", "rules_response", "player_response", "team_response"} {
		f.Add(vector(f, name), byte(0x0F))
	}
	h, _ := newTestHandler(f, Config{}, richSnapshot())
	tok := h.issuer.Token(clientA.Addr())
	out, _ := h.Answer(AppendQuery(nil, tok, AllChunks), clientA, make([]byte, MaxReply), nil)
	f.Add(out[0], byte(AllChunks))
	f.Fuzz(func(t *testing.T, p []byte, chunks byte) {
		var bad *BadAnswerError
		check := func(err error) {
			if err != nil && !errors.As(err, &bad) {
				t.Fatalf("% x: %v is not a BadAnswerError", p, err)
			}
		}
		h, payload, err := ParseHeader(p)
		check(err)
		if err == nil && (int(h.Length) != len(payload) || h.Current > h.Last) {
			t.Fatalf("% x: header %+v with %d payload bytes", p, h, len(payload))
		}
		_, err = Reassemble([][]byte{p}, h.Token)
		check(err)
		_, err = ParseResponse(p, chunks)
		check(err)
		_, err = ParseResponse(payload, chunks)
		check(err)
	})
}

package gamespy4

import (
	"fmt"
	"testing"

	"github.com/queryd/queryd/state"
)

func benchAnswer(b *testing.B, req []byte, h *Handler) {
	scratch := make([]byte, scratchSize)
	out := make([][]byte, 0, 4)
	b.ReportAllocs()
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		out, _ = h.Answer(req, clientA, scratch, out[:0])
	}
	if len(out) != 1 {
		b.Fatalf("%d datagrams", len(out))
	}
}

func BenchmarkAnswerHandshake(b *testing.B) {
	h, _ := newTestHandler(b, wikiConfig, wikiSnapshot())
	benchAnswer(b, unhex(b, "FE FD 09 00 00 00 01"), h)
}

func BenchmarkAnswerBasic(b *testing.B) {
	h, _ := newTestHandler(b, wikiConfig, wikiSnapshot())
	tok := WireToken(h.issuer.Token(clientA.Addr()))
	benchAnswer(b, withToken(unhex(b, "FE FD 00 00 00 00 01 00 00 00 00"), tok), h)
}

func BenchmarkAnswerFull64(b *testing.B) {
	snap := wikiSnapshot()
	snap.Players = nil
	for i := 0; i < 64; i++ {
		snap.Players = append(snap.Players, state.Player{ID: uint32(i), Name: fmt.Sprintf("Player%d", i)})
	}
	h, _ := newTestHandler(b, wikiConfig, snap)
	if h.Listed() != 64 {
		b.Fatalf("lists %d players, want 64", h.Listed())
	}
	tok := WireToken(h.issuer.Token(clientA.Addr()))
	benchAnswer(b, withToken(unhex(b, "FE FD 00 00 00 00 01 00 00 00 00 FF FF FF 01"), tok), h)
}

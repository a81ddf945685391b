package sqp

import (
	"testing"
)

func benchAnswer(b *testing.B, req []byte, h *Handler, want int) {
	scratch := make([]byte, MaxReply)
	out := make([][]byte, 0, 64)
	b.ReportAllocs()
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		out, _ = h.Answer(req, clientA, scratch, out[:0])
	}
	if len(out) != want {
		b.Fatalf("%d datagrams, want %d", len(out), want)
	}
}

func BenchmarkAnswerChallenge(b *testing.B) {
	h, _ := newTestHandler(b, upstreamConfig, upstreamSnapshot())
	benchAnswer(b, ChallengeRequest[:], h, 1)
}

func BenchmarkAnswerInfo(b *testing.B) {
	h, _ := newTestHandler(b, upstreamConfig, richSnapshot())
	benchAnswer(b, AppendQuery(nil, h.issuer.Token(clientA.Addr()), ChunkServerInfo), h, 1)
}

// BenchmarkAnswerAll255: every chunk of 255 players and 100 rules, a reply
// of 8 datagrams.
func BenchmarkAnswerAll255(b *testing.B) {
	h, _ := newTestHandler(b, upstreamConfig, manyPlayers(255, 100))
	benchAnswer(b, AppendQuery(nil, h.issuer.Token(clientA.Addr()), AllChunks), h, 8)
}

// BenchmarkAnswerWrongToken: a query with a wrong token (dropped).
func BenchmarkAnswerWrongToken(b *testing.B) {
	h, _ := newTestHandler(b, upstreamConfig, richSnapshot())
	benchAnswer(b, AppendQuery(nil, h.issuer.Token(clientA.Addr())+1, AllChunks), h, 0)
}

// BenchmarkUpdate4096: encoding a snapshot of 4,096 players with 16-byte
// names and 1,024 rules (the state's limits), and planning the 32 replies.
func BenchmarkUpdate4096(b *testing.B) {
	h, _ := newTestHandler(b, upstreamConfig, nil)
	snap := manyPlayers(4096, 1024)
	b.ReportAllocs()
	for b.Loop() {
		h.Update(snap)
	}
}

// BenchmarkUpdate255: a snapshot of 255 players and 100 rules.
func BenchmarkUpdate255(b *testing.B) {
	h, _ := newTestHandler(b, upstreamConfig, nil)
	snap := manyPlayers(255, 100)
	b.ReportAllocs()
	for b.Loop() {
		h.Update(snap)
	}
}

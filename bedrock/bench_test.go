package bedrock

import (
	"strings"
	"testing"
)

func BenchmarkAnswerPing(b *testing.B) {
	snap := vanillaSnapshot()
	snap.Name = strings.Repeat("A Bedrock server ", 15) // 255 bytes: the motd near its cap
	h := newTestHandler(b, vanillaConfig, snap)
	scratch := make([]byte, MaxPong)
	out := make([][]byte, 0, 4)
	ping := unhex(b, mcsuPing)
	b.ReportAllocs()
	b.SetBytes(int64(len(ping)))
	for b.Loop() {
		out, _ = h.Answer(ping, clientA, scratch, out[:0])
	}
	if len(out) != 1 {
		b.Fatalf("%d datagrams", len(out))
	}
}

package quake3

import (
	"fmt"
	"testing"
)

func benchAnswer(b *testing.B, req string) {
	doc := `{"name":"Bench","map":"q3dm17","max_players":64,"rules":{"timelimit":"20","fraglimit":"30"},"players":` +
		playersJSON(64, func(i int) string { return fmt.Sprintf("Player %d", i) }) + `}`
	h := handlerFor(b, exampleCfg, doc)
	scratch := make([]byte, MaxReply)
	out := make([][]byte, 0, 4)
	p := []byte(req)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o, _ := h.Answer(p, testSrc, scratch, out[:0])
		if len(o) != 1 {
			b.Fatal("no reply")
		}
	}
}

func BenchmarkAnswerInfo(b *testing.B)            { benchAnswer(b, q3+"getinfo\n") }
func BenchmarkAnswerInfoChallenge(b *testing.B)   { benchAnswer(b, q3+"getinfo A_ch4Lleng3") }
func BenchmarkAnswerStatus(b *testing.B)          { benchAnswer(b, q3+"getstatus\x00") }
func BenchmarkAnswerStatusChallenge(b *testing.B) { benchAnswer(b, q3+"getstatus xyz123") }

package state

import (
	"fmt"
	"strings"
	"testing"
)

// benchDoc is a document of n players; fitted writes what real feeders
// send: scores as floats, unknown pings and names over 64 characters.
func benchDoc(b *testing.B, n int, fitted bool) map[string]any {
	var sb strings.Builder
	sb.WriteString(`{"name":"Bench","max_players":4096,"players":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		if fitted {
			fmt.Fprintf(&sb, `"%d":{"name":"%s %d","score":%d.0,"ping":-1}`, i, strings.Repeat("é", 70), i, i%50)
		} else {
			fmt.Fprintf(&sb, `"%d":{"name":"Player %d","score":%d,"ping":%d}`, i, i, i%50, 20+i%100)
		}
	}
	sb.WriteString(`}}`)
	return doc(b, sb.String())
}

// BenchmarkPut1000 measures a replace of 1,000 players the state takes
// as they are: decoding, checking and publishing (no subscribers).
func BenchmarkPut1000(b *testing.B) { benchPut(b, benchDoc(b, 1000, false)) }

// BenchmarkPut1000Fitted is BenchmarkPut1000 with every player fixed
// (float score, unknown ping, name cut): the cost of the fixes and of
// 1,000 warnings.
func BenchmarkPut1000Fitted(b *testing.B) { benchPut(b, benchDoc(b, 1000, true)) }

func benchPut(b *testing.B, d map[string]any) {
	s, _ := newStore(b, `{}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Put(d); err != nil {
			b.Fatal(err)
		}
	}
}

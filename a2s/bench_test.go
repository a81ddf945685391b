package a2s

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/challenge"
)

// benchHandler has 64 players and 64 rules, as a busy server would.
func benchHandler(b *testing.B) *Handler {
	var s strings.Builder
	s.WriteString(`{"name":"Benchmark server","map":"de_dust2","max_players":64,"players":{`)
	for i := 0; i < 64; i++ {
		if i > 0 {
			s.WriteString(",")
		}
		s.WriteString(`"` + strconv.Itoa(i) + `":{"name":"player number ` + strconv.Itoa(i) + `","score":` + strconv.Itoa(i) + `}`)
	}
	s.WriteString(`},"rules":{`)
	for i := 0; i < 64; i++ {
		if i > 0 {
			s.WriteString(",")
		}
		s.WriteString(`"sv_rule_` + strconv.Itoa(i) + `":"value ` + strconv.Itoa(i) + `"`)
	}
	s.WriteString(`}}`)
	h := NewHandler(defaultCfg(), challenge.NewWithKey(testKey, nil), nil)
	h.Update(snapshotOf(b, s.String(), time.Now()))
	return h
}

func benchAnswer(b *testing.B, typ byte) {
	h := benchHandler(b)
	tok := le(h.issuer.Token(client.Addr()))
	var req []byte
	if typ == 'T' {
		req = infoRequest(tok)
	} else {
		req = append([]byte{0xFF, 0xFF, 0xFF, 0xFF, typ}, tok...)
	}
	scratch := make([]byte, 2048)
	out := make([][]byte, 0, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var o interface{ Proven() bool }
		out, o = h.Answer(req, client, scratch, out[:0])
		if !o.Proven() || len(out) == 0 {
			b.Fatal("not answered")
		}
	}
}

func BenchmarkAnswerInfo(b *testing.B)    { benchAnswer(b, 'T') }
func BenchmarkAnswerPlayers(b *testing.B) { benchAnswer(b, 'U') }
func BenchmarkAnswerRules(b *testing.B)   { benchAnswer(b, 'V') }

func BenchmarkAnswerChallenge(b *testing.B) {
	h := benchHandler(b)
	req := infoRequest(nil)
	scratch := make([]byte, 2048)
	out := make([][]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		out, _ = h.Answer(req, client, scratch, out[:0])
	}
}

// BenchmarkUpdate1000 encodes every A2S reply for a state of 1,000 players.
func BenchmarkUpdate1000(b *testing.B) {
	var s strings.Builder
	s.WriteString(`{"name":"n","players":{`)
	for i := 0; i < 1000; i++ {
		if i > 0 {
			s.WriteString(",")
		}
		s.WriteString(`"` + strconv.Itoa(i) + `":{"name":"player ` + strconv.Itoa(i) + `"}`)
	}
	s.WriteString(`}}`)
	snap := snapshotOf(b, s.String(), time.Now())
	h := NewHandler(defaultCfg(), challenge.NewWithKey(testKey, nil), nil)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h.Update(snap)
		h.players.Store(nil)
		h.playerReply(h.enc.Load())
	}
}

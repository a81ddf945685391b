package a2s

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/queryd/queryd/internal/polltest"
)

// FuzzFromA2S: whatever A2S_INFO, A2S_PLAYER and A2S_RULES the a2s client
// parses, their mapping is a valid state document.
func FuzzFromA2S(f *testing.F) {
	info := []byte("\xFF\xFF\xFF\xFFI\x11name\x00map\x00tf\x00Team Fortress\x00\xb8\x01\x03\x18\x01dl\x00\x01v1\x00\xf1\x87\x69")
	info = binary.LittleEndian.AppendUint64(info, 90071992547409920)
	info = append(info, 0x8c, 0x69, 'T', 'V', 0, 'k', 'w', 0)
	info = binary.LittleEndian.AppendUint64(info, 440)
	players := []byte("\xFF\xFF\xFF\xFFD\x02\x00a\x00\x05\x00\x00\x00")
	players = binary.LittleEndian.AppendUint32(players, math.Float32bits(12.5))
	players = append(players, "\x00\xff\x00\xff\xff\xff\xff"...)
	players = binary.LittleEndian.AppendUint32(players, math.Float32bits(float32(math.NaN())))
	rules := []byte("\xFF\xFF\xFF\xFFE\x02\x00k\x00v\x00\x00\x00")
	f.Add(info, players, rules)
	f.Fuzz(func(t *testing.T, ib, pb, rb []byte) {
		in, err := ParseInfo(ib)
		if err != nil {
			return
		}
		ps, _ := ParsePlayers(pb) // nil or what parsed: either is mapped
		rs, _ := ParseRules(rb)
		doc := FromA2S(in, ps, rs)
		polltest.Valid(t, doc)
	})
}

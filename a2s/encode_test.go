package a2s

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/state"
)

// unhex decodes a hex dump as printed in Valve's "Server queries" page.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// snapshotOf builds a snapshot through the real Store from a JSON document.
func snapshotOf(t testing.TB, doc string, now time.Time) *state.Snapshot {
	t.Helper()
	m, err := state.DecodeJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.NewStore(m, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	return st.Snapshot()
}

// The Counter-Strike: Source A2S_INFO example of Valve's page, followed by
// the EDF byte queryd always sends (game port only here).
func TestEncodeInfoValveExample(t *testing.T) {
	valve := unhex(t, `
FF FF FF FF 49 02 67 61 6D 65 32 78 73 2E 63 6F
6D 20 43 6F 75 6E 74 65 72 2D 53 74 72 69 6B 65
20 53 6F 75 72 63 65 20 23 31 00 64 65 5F 64 75
73 74 00 63 73 74 72 69 6B 65 00 43 6F 75 6E 74
65 72 2D 53 74 72 69 6B 65 3A 20 53 6F 75 72 63
65 00 F0 00 05 10 04 64 6C 00 00 31 2E 30 2E 30
2E 32 32 00`)
	now := time.Unix(1_700_000_000, 0)
	snap := snapshotOf(t, `{"name":"game2xs.com Counter-Strike Source #1","map":"de_dust",
		"folder":"cstrike","game":"Counter-Strike: Source","version":"1.0.0.22","max_players":16,
		"players":{"1":{"name":"a"},"2":{"name":"b","bot":true},"3":{"name":"c","bot":true},
		"4":{"name":"d","bot":true},"5":{"name":"e","bot":true}}}`, now)
	cfg := Config{AppID: 240, Protocol: 2, GamePort: 27015}
	got := EncodeInfo(cfg, snap, Listed(snap))
	want := append(valve, edfPort, 0x87, 0x69) // EDF 0x80, port 27015 LE
	if !bytes.Equal(got, want) {
		t.Fatalf("INFO\n got %x\nwant %x", got, want)
	}
}

func TestEncodeInfoEDF(t *testing.T) {
	snap := snapshotOf(t, `{"name":"n","steam_id":"90071996842377216","game_port":27016,
		"sourcetv":{"port":27020,"name":"tv"},"tags":["a","b"],"password":true,"vac":true,
		"server_type":"listen","environment":"windows"}`, time.Now())
	got := EncodeInfo(Config{AppID: 480, Protocol: 17, GameID: 480}, snap, 0)
	in, err := ParseInfo(got)
	if err != nil {
		t.Fatal(err)
	}
	if in.EDF != edfPort|edfSteamID|edfSourceTV|edfKeywords|edfGameID {
		t.Errorf("EDF = %#x", in.EDF)
	}
	if in.Port != 27016 || in.SteamID != 90071996842377216 || in.SourceTVPort != 27020 ||
		in.SourceTVName != "tv" || in.Keywords != "a,b" || in.GameID != 480 || in.AppID != 480 {
		t.Errorf("EDF fields: %+v", in)
	}
	if !in.Password || !in.VAC || in.ServerType != "l" || in.Environment != "w" {
		t.Errorf("flags: %+v", in)
	}
}

func TestEncodeInfoFitsOnePacket(t *testing.T) {
	long := strings.Repeat("é", 256) // 512 bytes of UTF-8
	doc := `{"name":"` + long + `","map":"` + long[:256] + `","game":"` + long[:256] +
		`","folder":"` + long[:256] + `","version":"` + long[:256] + `","keywords":"` + long[:256] +
		`","sourcetv":{"port":1,"name":"` + long[:256] + `"}}`
	info := EncodeInfo(Config{GameID: 1}, snapshotOf(t, doc, time.Now()), 0)
	if len(info) > MaxPacket {
		t.Fatalf("INFO is %d bytes, more than one packet", len(info))
	}
	in, err := ParseInfo(info)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Name) != capName || !strings.HasPrefix(long, in.Name) {
		t.Errorf("name cut to %d bytes, want %d at a rune boundary", len(in.Name), capName)
	}
}

// The A2S_PLAYER example of Valve's page. Valve's example numbers its two
// players 1 and 2; queryd numbers chunks from 0 as the field's description
// says, so the index bytes are compared apart.
func TestEncodePlayersValveExample(t *testing.T) {
	valve := unhex(t, `
FF FF FF FF 44 02 01 5B 44 5D 2D 2D 2D 2D 3E 54
2E 4E 2E 57 3C 2D 2D 2D 2D 00 0E 00 00 00 B4 97
00 44 02 4B 69 6C 6C 65 72 20 21 21 21 00 05 00
00 00 69 24 D9 43`)
	now := time.Unix(1_700_000_000, 0)
	d1 := float64(math.Float32frombits(0x440097B4))
	d2 := float64(math.Float32frombits(0x43D92469))
	doc := `{"players":{"7":{"name":"[D]---->T.N.W<----","score":14,"time":` + ftoa(d1) +
		`},"9":{"name":"Killer !!!","score":5,"time":` + ftoa(d2) + `}}}`
	snap := snapshotOf(t, doc, now)
	got := EncodePlayers(snap, Listed(snap), now)
	want := append([]byte{}, valve...)
	want[6], want[34] = 0, 1 // chunk indexes from 0
	if !bytes.Equal(got, want) {
		t.Fatalf("PLAYER\n got %x\nwant %x", got, want)
	}
}

// ftoa formats seconds with the nanosecond precision the Store keeps.
func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 9, 64) }

func itoa(i int) string { return strconv.Itoa(i) }

func TestEncodeRules(t *testing.T) {
	snap := snapshotOf(t, `{"rules":{"mp_timelimit":"30","sv_gravity":800,"b":true}}`, time.Now())
	got := EncodeRules(snap)
	want := []byte("\xFF\xFF\xFF\xFFE\x03\x00b\x00true\x00mp_timelimit\x0030\x00sv_gravity\x00800\x00")
	if !bytes.Equal(got, want) {
		t.Fatalf("RULES\n got %q\nwant %q", got, want)
	}
}

func TestListedCapsAt255(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"players":{`)
	for i := 0; i < 300; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + itoa(i) + `":{"name":"p` + itoa(i) + `"}`)
	}
	b.WriteString(`}}`)
	snap := snapshotOf(t, b.String(), time.Now())
	if n := Listed(snap); n != 255 {
		t.Fatalf("Listed = %d, want 255", n)
	}
	info, _ := ParseInfo(EncodeInfo(Config{}, snap, Listed(snap)))
	if info.Players != 255 {
		t.Fatalf("INFO players = %d, want 255", info.Players)
	}
}

func TestSplit(t *testing.T) {
	payload := make([]byte, 3000)
	copy(payload, "\xFF\xFF\xFF\xFFE")
	for i := 5; i < len(payload); i++ {
		payload[i] = byte(i)
	}
	frags := Split(payload, 0xFFFFFFFF)
	if len(frags) != 3 {
		t.Fatalf("%d fragments, want 3", len(frags))
	}
	var joined []byte
	for n, f := range frags {
		if !bytes.Equal(f[:4], []byte{0xFE, 0xFF, 0xFF, 0xFF}) {
			t.Errorf("fragment %d header % x", n, f[:4])
		}
		id := binary.LittleEndian.Uint32(f[4:])
		if id != 0x7FFF7FFF {
			t.Errorf("split id %#x: bits 31 and 15 must be clear", id)
		}
		if f[8] != 3 || int(f[9]) != n || binary.LittleEndian.Uint16(f[10:]) != 1248 {
			t.Errorf("fragment %d: total %d number %d size %d", n, f[8], f[9], binary.LittleEndian.Uint16(f[10:]))
		}
		if len(f)-12 > FragmentPayload {
			t.Errorf("fragment %d carries %d bytes", n, len(f)-12)
		}
		joined = append(joined, f[12:]...)
	}
	if !bytes.Equal(joined, payload) {
		t.Fatal("fragments do not reassemble to the payload")
	}
	if one := Split(payload[:MaxPacket], 1); len(one) != 1 || len(one[0]) != MaxPacket {
		t.Fatal("a payload of one packet must not be split")
	}
}

func TestRulesCutAtMaxReply(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"rules":{`)
	for i := 0; i < 1024; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"rule_` + itoa(i) + `":"` + strings.Repeat("v", 200) + `"`)
	}
	b.WriteString(`}}`)
	snap := snapshotOf(t, b.String(), time.Now())
	p := EncodeRules(snap)
	if len(p) > MaxReply {
		t.Fatalf("RULES payload %d bytes > %d", len(p), MaxReply)
	}
	rules, err := ParseRules(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 || len(rules) >= 1024 {
		t.Fatalf("%d rules kept", len(rules))
	}
	if frags := Split(p, 4); len(frags) > MaxFragments {
		t.Fatalf("%d fragments > %d", len(frags), MaxFragments)
	}
}

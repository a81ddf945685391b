package gamespy4

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/queryd/queryd/state"
)

// The Minecraft wiki's basic stat example, after the 5-byte header
// (00 00 00 00 01).
const wikiBasic = `
41 20 4D 69 6E 65 63 72 61 66 74 20 53 65 72 76 65 72 00
53 4D 50 00
77 6F 72 6C 64 00
32 00
32 30 00
DD 63
31 32 37 2E 30 2E 30 2E 31 00`

// The Minecraft wiki's full stat example, after the 5-byte header.
const wikiFull = `
73 70 6C 69 74 6E 75 6D 00 80 00
68 6F 73 74 6E 61 6D 65 00 41 20 4D 69 6E 65 63 72 61 66 74 20 53 65 72 76 65 72 00
67 61 6D 65 74 79 70 65 00 53 4D 50 00
67 61 6D 65 5F 69 64 00 4D 49 4E 45 43 52 41 46 54 00
76 65 72 73 69 6F 6E 00 42 65 74 61 20 31 2E 39 20 50 72 65 72 65 6C 65 61 73 65 20 34 00
70 6C 75 67 69 6E 73 00 00
6D 61 70 00 77 6F 72 6C 64 00
6E 75 6D 70 6C 61 79 65 72 73 00 32 00
6D 61 78 70 6C 61 79 65 72 73 00 32 30 00
68 6F 73 74 70 6F 72 74 00 32 35 35 36 35 00
68 6F 73 74 69 70 00 31 32 37 2E 30 2E 30 2E 31 00
00
01 70 6C 61 79 65 72 5F 00 00
62 61 72 6E 65 79 67 61 6C 65 00
56 69 76 61 6C 61 68 65 6C 76 69 67 00
00`

func TestEncodeBasicWikiBytes(t *testing.T) {
	got := EncodeBasic(wikiConfig, wikiSnapshot())
	if want := unhex(t, wikiBasic); !bytes.Equal(got, want) {
		t.Fatalf("basic stat\n got % x\nwant % x", got, want)
	}
}

func TestEncodeFullWikiBytes(t *testing.T) {
	got, listed := EncodeFull(wikiConfig, wikiSnapshot())
	if want := unhex(t, wikiFull); !bytes.Equal(got, want) {
		t.Fatalf("full stat\n got %q\nwant %q", got, want)
	}
	if listed != 2 {
		t.Fatalf("listed %d players, want 2", listed)
	}
}

func TestHostPortPrecedence(t *testing.T) {
	snap := wikiSnapshot()
	snap.GamePort = 27015 // the state's game_port wins over the config
	b := EncodeBasic(wikiConfig, snap)
	if !bytes.Contains(b, []byte("20\x00\x87\x69127.0.0.1\x00")) { // 27015 = 0x6987 LE
		t.Fatalf("basic stat without hostport 27015 LE: %q", b)
	}
	full, _ := EncodeFull(wikiConfig, snap)
	if !bytes.Contains(full, []byte("hostport\x0027015\x00")) {
		t.Fatalf("full stat without hostport 27015: %q", full)
	}
}

func TestEncodeStripsNUL(t *testing.T) {
	snap := wikiSnapshot() // built directly: the state's validation would refuse NULs
	snap.Name = "A\x00B"
	snap.Map = "\x00w"
	snap.Players = []state.Player{{Name: "x\x00y"}, {Name: "\x00"}, {Name: ""}, {Name: "z"}}
	snap.Rules = []state.Rule{{Key: "k", Value: "v\x00v"}}
	cfg := wikiConfig
	cfg.Plugins = "P\x00"
	basic := EncodeBasic(cfg, snap)
	if want := "AB\x00SMP\x00w\x004\x0020\x00"; !bytes.HasPrefix(basic, []byte(want)) {
		t.Fatalf("basic stat %q, want prefix %q", basic, want)
	}
	full, listed := EncodeFull(cfg, snap)
	f, err := ParseFull(append([]byte{0, 1, 2, 3, 4}, full...), [4]byte{1, 2, 3, 4})
	if err != nil {
		t.Fatalf("parse own full stat: %v", err)
	}
	if got := f.Get("hostname") + "|" + f.Get("plugins") + "|" + f.Get("map") + "|" + f.Get("k"); got != "AB|P|w|vv" {
		t.Fatalf("values %q, want AB|P|w|vv", got)
	}
	if fmt.Sprint(f.Players) != "[xy z]" || listed != 2 {
		t.Fatalf("players %q (listed %d), want [xy z]: empty names are left out", f.Players, listed)
	}
	if f.Get("numplayers") != "4" {
		t.Fatalf("numplayers %q, want the whole count 4", f.Get("numplayers"))
	}
}

func TestEncodeCapsAtRuneBoundary(t *testing.T) {
	snap := wikiSnapshot()
	snap.Name = strings.Repeat("é", 200) // 400 bytes
	b := EncodeBasic(wikiConfig, snap)
	motd := string(b[:bytes.IndexByte(b, 0)])
	if len(motd) != CapHostname || !utf8.ValidString(motd) {
		t.Fatalf("motd of %d bytes (valid UTF-8: %v), want %d", len(motd), utf8.ValidString(motd), CapHostname)
	}
	snap.Name = "x" + strings.Repeat("é", 200) // the cut falls inside a rune
	b = EncodeBasic(wikiConfig, snap)
	motd = string(b[:bytes.IndexByte(b, 0)])
	if len(motd) != CapHostname-1 || !utf8.ValidString(motd) {
		t.Fatalf("motd of %d bytes (valid UTF-8: %v), want %d", len(motd), utf8.ValidString(motd), CapHostname-1)
	}
}

func TestFullRulesAfterVanillaKeys(t *testing.T) {
	snap := wikiSnapshot()
	snap.Rules = []state.Rule{
		{Key: "a_rule", Value: "1"},
		{Key: "bad\x01key", Value: "x"},
		{Key: "hostname", Value: "spoof"},
		{Key: "map", Value: "spoof"},
		{Key: "mp_timelimit", Value: "30"},
		{Key: "splitnum", Value: "x"},
		{Key: "trap", Value: "\x01player_"},
	}
	full, _ := EncodeFull(wikiConfig, snap)
	f, err := ParseFull(append([]byte{0, 0, 0, 0, 1}, full...), [4]byte{0, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range f.Keys {
		keys = append(keys, kv[0])
	}
	want := "hostname gametype game_id version plugins map numplayers maxplayers hostport hostip a_rule mp_timelimit"
	if strings.Join(keys, " ") != want {
		t.Fatalf("keys %q\nwant %q", keys, want)
	}
	if f.Get("hostname") != "A Minecraft Server" || f.Get("mp_timelimit") != "30" {
		t.Fatalf("values: %q", f.Keys)
	}
}

// TestFullTruncatesPlayers: the full stat stays within MaxPacket; players
// that do not fit are left out, numplayers still counts them all.
func TestFullTruncatesPlayers(t *testing.T) {
	for _, max := range []int{0, MinPacket, 1472, MaxPacket} {
		cfg := wikiConfig
		cfg.MaxPacket = max
		snap := wikiSnapshot()
		snap.Players = nil
		for i := 0; i < 600; i++ {
			snap.Players = append(snap.Players, state.Player{ID: uint32(i), Name: fmt.Sprintf("player_name_%04d", i)})
		}
		snap.Rules = []state.Rule{{Key: "z_rule", Value: "dropped before any player is"}}
		full, listed := EncodeFull(cfg, snap)
		limit := cfg.maxPacket()
		if HeaderLen+len(full) > limit {
			t.Fatalf("max %d: reply of %d bytes", limit, HeaderLen+len(full))
		}
		if HeaderLen+len(full)+len("player_name_0000")+1 <= limit {
			t.Fatalf("max %d: reply of %d bytes has room for another player", limit, HeaderLen+len(full))
		}
		f, err := ParseFull(append(make([]byte, 5), full...), [4]byte{})
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Players) != listed || listed == 0 || listed >= 600 {
			t.Fatalf("max %d: %d players parsed, listed %d", limit, len(f.Players), listed)
		}
		if f.Players[listed-1] != fmt.Sprintf("player_name_%04d", listed-1) {
			t.Fatalf("max %d: last player %q: not the first ones in order", limit, f.Players[listed-1])
		}
		if f.Get("numplayers") != "600" || f.Get("z_rule") != "" {
			t.Fatalf("max %d: numplayers %q, z_rule %q", limit, f.Get("numplayers"), f.Get("z_rule"))
		}
	}
}

// TestWorstCaseFits: with every string at its cap, the key/value section and
// the empty player section still fit the smallest packet.
func TestWorstCaseFits(t *testing.T) {
	cfg := Config{
		GameType: strings.Repeat("g", 100), GameID: strings.Repeat("i", 100),
		Plugins: strings.Repeat("p", 1000), HostPort: 65535,
		HostIP: strings.Repeat("h", 100), MaxPacket: MinPacket,
	}
	snap := &state.Snapshot{
		Name: strings.Repeat("n", 2000), Map: strings.Repeat("m", 2000),
		GameVersion: strings.Repeat("v", 2000), MaxPlayers: state.MaxMaxPlayers,
		Players: make([]state.Player, state.MaxPlayers),
	}
	full, _ := EncodeFull(cfg, snap)
	if HeaderLen+len(full) > MinPacket {
		t.Fatalf("worst-case full stat of %d bytes, more than %d", HeaderLen+len(full), MinPacket)
	}
	if basic := EncodeBasic(cfg, snap); HeaderLen+len(basic) > MinPacket {
		t.Fatalf("worst-case basic stat of %d bytes", HeaderLen+len(basic))
	}
}

// Names of blanks only are left out of the full stat's list like empty
// names: a client that trims names would read one as the empty name that
// ends the list. numplayers still counts them.
func TestEncodeSkipsBlankNames(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  []string // the names listed
	}{
		{[]string{"a", "   ", "b"}, []string{"a", "b"}},
		{[]string{"\t", "a"}, []string{"a"}},
		{[]string{" \t \r\n", "\u00a0", "\u3000"}, nil},
		{[]string{" a ", "\tb"}, []string{" a ", "\tb"}}, // text between the blanks: sent as it is
		{[]string{"\x00 \x00", "c"}, []string{"c"}},      // blank once the NULs are gone
	} {
		snap := wikiSnapshot()
		snap.Players = nil
		for i, n := range tc.names {
			snap.Players = append(snap.Players, state.Player{ID: uint32(i), Name: n})
		}
		full, listed := EncodeFull(wikiConfig, snap)
		f, err := ParseFull(append([]byte{0, 1, 2, 3, 4}, full...), [4]byte{1, 2, 3, 4})
		if err != nil {
			t.Fatalf("%q: parse own full stat: %v", tc.names, err)
		}
		if !slices.Equal(f.Players, tc.want) || listed != len(tc.want) {
			t.Errorf("%q: players %q (listed %d), want %q", tc.names, f.Players, listed, tc.want)
		}
		if f.Get("numplayers") != strconv.Itoa(len(tc.names)) {
			t.Errorf("%q: numplayers %q, want the whole count %d", tc.names, f.Get("numplayers"), len(tc.names))
		}
	}
}

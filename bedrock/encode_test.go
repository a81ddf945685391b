package bedrock

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/queryd/queryd/state"
)

func TestEncodePongVanilla(t *testing.T) {
	status := "MCPE;Dedicated Server;766;1.21.50;2;10;1234567890123456789;Bedrock level;Survival;1;19132;19133;"
	if got := StatusString(vanillaConfig, vanillaSnapshot()); got != status {
		t.Fatalf("status\n%q\nwant\n%q", got, status)
	}
	want := unhex(t, "1C 00 00 00 00 00 00 00 00  11 22 10 F4 7D E9 81 15 "+magicHex+fmt.Sprintf(" %04X", len(status)))
	want = append(want, status...)
	if got := EncodePong(vanillaConfig, vanillaSnapshot()); !bytes.Equal(got, want) {
		t.Fatalf("pong\n% x\nwant\n% x", got, want)
	}
	if binary.BigEndian.Uint64(want[9:]) != vanillaConfig.GUID {
		t.Fatal("the test's GUID bytes are wrong")
	}
}

// A ';' in any field of the state becomes ':' and shifts nothing.
func TestStatusSemicolons(t *testing.T) {
	snap := vanillaSnapshot()
	snap.Name, snap.Map, snap.GameVersion, snap.Gamemode = "A;B;;C", ";", "1;21", "Sur;vival"
	st, err := ParseStatus(StatusString(vanillaConfig, snap))
	if err != nil {
		t.Fatal(err)
	}
	want := Status{Edition: "MCPE", MOTD: "A:B::C", Protocol: 766, Version: "1:21", Players: 2, MaxPlayers: 10,
		ServerID: "1234567890123456789", SubMOTD: ":", GameMode: "Sur:vival", GameModeNumber: 1, IPv4Port: 19132, IPv6Port: 19133}
	if st != want {
		t.Fatalf("got %+v\nwant %+v", st, want)
	}
}

// Non-ASCII text passes as UTF-8; fields over their caps are cut at a
// UTF-8 boundary.
func TestStatusTextAndCaps(t *testing.T) {
	snap := vanillaSnapshot()
	snap.Name, snap.Map = "Zoë's 日本語 §aServer", "Ελληνικά"
	st, _ := ParseStatus(StatusString(vanillaConfig, snap))
	if st.MOTD != snap.Name || st.SubMOTD != snap.Map {
		t.Fatalf("motd %q sub-motd %q", st.MOTD, st.SubMOTD)
	}
	snap.Name, snap.Map, snap.GameVersion, snap.Gamemode = "x"+emoji(255), emoji(128), emoji(128), "ab"+emoji(128)
	st, _ = ParseStatus(StatusString(vanillaConfig, snap))
	for _, f := range []struct {
		name, got string
		want      int
	}{{"motd", st.MOTD, 253}, {"sub-motd", st.SubMOTD, 128}, {"version", st.Version, 64}, {"game mode", st.GameMode, 62}} {
		if len(f.got) != f.want || !utf8.ValidString(f.got) {
			t.Errorf("%s: %d bytes (valid UTF-8 %v), want %d", f.name, len(f.got), utf8.ValidString(f.got), f.want)
		}
	}
}

// The game mode and the ports fall back: the state's, then the config's,
// then the IPv4 port for IPv6.
func TestStatusFallbacks(t *testing.T) {
	snap := vanillaSnapshot()
	cfg := vanillaConfig
	cfg.IPv6Port = 0
	st, _ := ParseStatus(StatusString(cfg, snap))
	if st.GameMode != "Survival" || st.IPv4Port != 19132 || st.IPv6Port != 19132 {
		t.Errorf("config fallbacks: %+v", st)
	}
	snap.Gamemode, snap.GamePort = "Creative", 19200
	st, _ = ParseStatus(StatusString(cfg, snap))
	if st.GameMode != "Creative" || st.IPv4Port != 19200 || st.IPv6Port != 19200 {
		t.Errorf("state values: %+v", st)
	}
	cfg.IPv6Port = 19201
	if st, _ = ParseStatus(StatusString(cfg, snap)); st.IPv6Port != 19201 {
		t.Errorf("ipv6_port: %+v", st)
	}
}

// Every field at its widest makes a pong of exactly MaxPong bytes; the
// size formula of doc.go holds at the defaults.
func TestMaxPong(t *testing.T) {
	snap := &state.Snapshot{Name: emoji(256), Map: emoji(128), GameVersion: emoji(128), Gamemode: emoji(128), MaxPlayers: 65535}
	for i := 0; i < state.MaxPlayers; i++ {
		snap.Players = append(snap.Players, state.Player{ID: uint32(i)})
	}
	cfg := Config{Edition: strings.Repeat("E", CapEdition), Protocol: maxProtocol, GameModeNumber: maxGameModeNumber,
		IPv4Port: 65535, IPv6Port: 65535, GUID: MaxGUID}
	if got := len(EncodePong(cfg, snap)); got != MaxPong-1 {
		t.Fatalf("widest pong of the config %d bytes, want MaxPong-1 %d", got, MaxPong-1)
	}
	wide := *snap
	wide.Bedrock = &state.BedrockFields{Edition: emoji(16), Protocol: state.MaxBedrockProtocol, ServerID: 1<<64 - 1,
		GameModeNumber: state.MaxGameModeNumber, IPv6Port: 65535}
	if got := len(EncodePong(cfg, &wide)); got != MaxPong {
		t.Fatalf("widest pong %d bytes, want MaxPong %d", got, MaxPong)
	}
	def := vanillaConfig
	def.GUID = MinGUID
	formula := 84 + 256 + 128 + 64 + 64 + 4 + 5
	if got := len(EncodePong(def, snap)); got != formula || got != 605 {
		t.Fatalf("every state field at its widest, default config: %d bytes; the formula gives %d", got, formula)
	}
}

func TestGUIDFrom(t *testing.T) {
	for _, x := range []uint64{0, 1, MinGUID, MaxGUID, MaxGUID - MinGUID, MaxGUID - MinGUID + 1, 1<<64 - 1, 0x0123456789ABCDEF} {
		g := GUIDFrom(x)
		if g < MinGUID || g > MaxGUID || len(strconv.FormatUint(g, 10)) != 19 || int64(g) < 0 {
			t.Errorf("GUIDFrom(%d) = %d", x, g)
		}
	}
	if GUIDFrom(0) != MinGUID || GUIDFrom(MaxGUID-MinGUID) != MaxGUID {
		t.Error("GUIDFrom does not span [MinGUID, MaxGUID]")
	}
}

package bedrock

import (
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"

	"github.com/queryd/queryd/state"
)

// vanillaConfig and vanillaSnapshot reproduce a Bedrock Dedicated Server's
// defaults ("Dedicated Server", "Bedrock level", Survival, ports 19132 and
// 19133) with a fixed GUID.
var vanillaConfig = Config{
	Edition: "MCPE", Protocol: 766, GameMode: "Survival", GameModeNumber: 1,
	IPv4Port: 19132, IPv6Port: 19133, GUID: 1234567890123456789,
}

func vanillaSnapshot() *state.Snapshot {
	return &state.Snapshot{
		Version:     1,
		Name:        "Dedicated Server",
		Map:         "Bedrock level",
		GameVersion: "1.21.50",
		MaxPlayers:  10,
		Players:     []state.Player{{ID: 1, Name: "Steve"}, {ID: 2, Name: "Alex"}},
	}
}

// unhex decodes hex written with spaces and newlines between the bytes.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex in test: %v", err)
	}
	return b
}

const magicHex = "00 FF FF 00 FE FE FE FE FD FD FD FD 12 34 56 78"

// mcsuPing is the ping minecraft-server-util's statusBedrock sends (its
// time is Date.now(); client GUID 2); gamedigPing is gamedig's (time
// 11 22 … 88, client GUID 0).
var (
	mcsuPing    = "01 00 00 01 93 A1 B2 C3 D4 " + magicHex + " 00 00 00 00 00 00 00 02"
	gamedigPing = "01 11 22 33 44 55 66 77 88 " + magicHex + " 00 00 00 00 00 00 00 00"
)

var clientA = netip.MustParseAddrPort("127.0.0.1:40001")

func newTestHandler(t testing.TB, cfg Config, snap *state.Snapshot) *Handler {
	t.Helper()
	h := NewHandler(cfg, DefaultPacketRate, 0)
	if snap != nil {
		h.Update(snap)
	}
	return h
}

// emoji returns n four-byte characters.
func emoji(n int) string { return strings.Repeat("\U0001F600", n) }

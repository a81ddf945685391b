package sqp

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/state"
)

// upstreamConfig and upstreamSnapshot reproduce the server of
// go-svrquery's captured ServerInfo reply: "my server", ctf, build "1",
// map "map", 5 of 10 players, port 1025.
var upstreamConfig = Config{GameType: "ctf", GamePort: 1025}

func upstreamSnapshot() *state.Snapshot {
	s := &state.Snapshot{Version: 1, Name: "my server", Map: "map", GameVersion: "1", MaxPlayers: 10}
	for i := range 5 {
		s.Players = append(s.Players, state.Player{ID: uint32(i), Name: fmt.Sprintf("p%d", i)})
	}
	return s
}

// richSnapshot has every kind of rule value and player the encoder treats
// differently: booleans, integers of each size, text that looks like a
// number, negative and extreme scores, non-ASCII and empty names.
func richSnapshot() *state.Snapshot {
	return &state.Snapshot{
		Version: 7, Name: "Zoë's SQP server 🎮", Map: "de_dust2", GameVersion: "2.0.1",
		MaxPlayers: 64, Gamemode: "Deathmatch", GamePort: 7777,
		Players: []state.Player{
			{ID: 1, Name: "Alice", Score: 12, Ping: 31},
			{ID: 2, Name: "Łukasz 日本語", Score: -1, Ping: 65535},
			{ID: 3, Name: "", Score: -2147483648, Ping: 0},
			{ID: 4, Name: "Max", Score: 2147483647, Ping: 999},
		},
		Rules: []state.Rule{
			{Key: "bool_false", Value: "false"},
			{Key: "bool_true", Value: "true"},
			{Key: "leading_zero", Value: "007"},
			{Key: "negative", Value: "-5"},
			{Key: "real", Value: "1.5"},
			{Key: "text", Value: "Grüße ✓"},
			{Key: "u16", Value: "65535"},
			{Key: "u32", Value: "4294967295"},
			{Key: "u64", Value: "18446744073709551615"},
			{Key: "u64_over", Value: "18446744073709551616"},
			{Key: "zero", Value: "0"},
		},
	}
}

// manyPlayers returns a snapshot of n players named "Player 0001" and so
// on, with rules rules of about 60 bytes each.
func manyPlayers(n, rules int) *state.Snapshot {
	s := &state.Snapshot{Version: 3, Name: "big", Map: "m", MaxPlayers: 65535}
	for i := range n {
		s.Players = append(s.Players, state.Player{ID: uint32(i), Name: fmt.Sprintf("Player %04d", i), Score: int32(i - 100), Ping: int32(i % 300)})
	}
	for i := range rules {
		s.Rules = append(s.Rules, state.Rule{Key: fmt.Sprintf("rule_%04d", i), Value: fmt.Sprintf("value %04d %s", i, strings.Repeat("x", 40))})
	}
	return s
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

// vector reads one of go-svrquery's captured packets.
func vector(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "go-svrquery", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testClock is a settable clock for the challenge issuer.
type testClock struct{ t time.Time }

func (c *testClock) now() time.Time { return c.t }

func newTestHandler(t testing.TB, cfg Config, snap *state.Snapshot) (*Handler, *testClock) {
	t.Helper()
	clk := &testClock{t: time.Unix(1_700_000_000, 0)}
	is := challenge.NewWithKey([16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, clk.now)
	h := NewHandler(cfg, is)
	if snap != nil {
		h.Update(snap)
	}
	return h, clk
}

var (
	clientA = netip.MustParseAddrPort("127.0.0.1:40001")
	clientB = netip.MustParseAddrPort("127.0.0.2:40001")
)

// serve asks h with a scratch of MaxReply bytes, as the responder does.
func serve(h *Handler, req []byte, src netip.AddrPort) ([][]byte, dgram.Outcome) {
	return h.Answer(req, src, make([]byte, MaxReply), nil)
}

// query asks h for chunks from clientA with its token and decodes the
// reply as the client does.
func query(t testing.TB, h *Handler, chunks byte) (*Response, [][]byte) {
	t.Helper()
	tok := h.issuer.Token(clientA.Addr())
	out, oc := serve(h, AppendQuery(nil, tok, chunks), clientA)
	if oc != dgram.Answered {
		t.Fatalf("chunks %#02x: outcome %v", chunks, oc)
	}
	payload, err := Reassemble(out, tok)
	if err != nil {
		t.Fatalf("chunks %#02x: %v", chunks, err)
	}
	resp, err := ParseResponse(payload, chunks)
	if err != nil {
		t.Fatalf("chunks %#02x: %v", chunks, err)
	}
	return resp, out
}

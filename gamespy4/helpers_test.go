package gamespy4

import (
	"bufio"
	"encoding/hex"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/state"
)

// wikiConfig and wikiSnapshot reproduce the Minecraft wiki's Query example
// server ("A Minecraft Server", world, 2 of 20 players, 127.0.0.1:25565).
var wikiConfig = Config{GameType: "SMP", GameID: "MINECRAFT", HostPort: 25565, HostIP: "127.0.0.1"}

func wikiSnapshot() *state.Snapshot {
	return &state.Snapshot{
		Version:     1,
		Name:        "A Minecraft Server",
		Map:         "world",
		GameVersion: "Beta 1.9 Prerelease 4",
		MaxPlayers:  20,
		Players: []state.Player{
			{ID: 1, Name: "barneygale"},
			{ID: 2, Name: "Vivalahelvig"},
		},
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

// vector is one request captured from a real client.
type vector struct {
	probe string
	req   []byte
}

// loadVectors reads testdata/client-requests.txt.
func loadVectors(t testing.TB) []vector {
	t.Helper()
	f, err := os.Open("testdata/client-requests.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []vector
	probe := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			probe = strings.TrimPrefix(line, "## ")
		case strings.HasPrefix(line, "REQ mcquery "):
			out = append(out, vector{probe, unhex(t, strings.TrimPrefix(line, "REQ mcquery "))})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 14 {
		t.Fatalf("read %d vectors, want 14", len(out))
	}
	return out
}

// withToken returns a copy of a stat request with its token replaced.
func withToken(req []byte, tok uint32) []byte {
	b := append([]byte{}, req...)
	b[7], b[8], b[9], b[10] = byte(tok>>24), byte(tok>>16), byte(tok>>8), byte(tok)
	return b
}

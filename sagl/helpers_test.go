package sagl

import (
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/state"
)

// exampleDoc is the state behind the spec's "What a query says" example.
const exampleDoc = `{"name":"Example RP","version":"0.2.0","protocol":102,"max_players":50,
 "map":"Los Santos",
 "players":{"0":{"name":"Thomas","score":12,"ping":31},"3":{"name":"Sam","score":4,"ping":58}},
 "branding":{"primary":"#FF8800","secondary":null,"show_name":false},
 "description":"Los Santos roleplay. Whitelisted; apply on the website.",
 "gamemode":"Roleplay","language":"en","tags":["roleplay","whitelist"],
 "links":{"website":"https://example.com","discord":"https://discord.gg/example"},
 "values":{"map":"Los Santos","copsOnDuty":3}}`

var testClock = func() time.Time { return time.Unix(1_700_000_000, 0) }

// newStore makes a store whose first snapshot is doc.
func newStore(t testing.TB, doc string) *state.Store {
	t.Helper()
	m, err := state.DecodeJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.NewStore(m, testClock)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func snapOf(t testing.TB, doc string) *state.Snapshot { return newStore(t, doc).Snapshot() }

func testLogo(t testing.TB) *Logo {
	t.Helper()
	b, err := os.ReadFile("testdata/logo.png")
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLogo(b, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func testIssuer() *challenge.Issuer {
	return challenge.NewWithKey([16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, testClock)
}

var testSrc = netip.MustParseAddrPort("127.0.0.1:50000")

// manyPlayers returns a document with n players named "Player NNNN".
func manyPlayers(n int) string {
	b := []byte(`{"name":"Big","max_players":4096,"players":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `"`...)
		b = appendInt(b, i)
		b = append(b, `":{"name":"Player `...)
		b = appendInt(b, 1000+i)
		b = append(b, `","score":`...)
		b = appendInt(b, i%97)
		b = append(b, `,"ping":`...)
		b = appendInt(b, 10+i%200)
		b = append(b, '}')
	}
	return string(append(b, "}}"...))
}

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

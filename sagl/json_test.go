package sagl

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/state"
)

const logoHex = "3fb9b3695e8bf110116031a988ac71365621711cca0f254e777bd6a8c420d5eb"

func TestEncodeJSONExample(t *testing.T) {
	got := string(EncodeJSON(PlayersList, 0, snapOf(t, exampleDoc), testLogo(t)))
	want := `{"query":1,"name":"Example RP","version":"0.2.0","protocol":102,` +
		`"players":{"online":2,"max":50,"list":[{"id":0,"name":"Thomas","score":12,"ping":31},{"id":3,"name":"Sam","score":4,"ping":58}]},` +
		`"branding":{"logo":{"sha256":"` + logoHex + `","size":3698},"primary":"#ff8800","secondary":null,"showName":false},` +
		`"description":"Los Santos roleplay. Whitelisted; apply on the website.","gamemode":"Roleplay","language":"en",` +
		`"tags":["roleplay","whitelist"],"links":{"discord":"https://discord.gg/example","website":"https://example.com"},` +
		`"values":{"copsOnDuty":3,"map":"Los Santos"}}`
	if got != want {
		t.Fatalf("JSON\n got %s\nwant %s", got, want)
	}
}

// The spec's example, as printed there (logo hash and size aside), decodes
// to the same value as ours.
func TestEncodeJSONMatchesSpecExample(t *testing.T) {
	spec := `{
  "query": 1, "name": "Example RP", "version": "0.2.0", "protocol": 102,
  "players": {"online": 2, "max": 50,
    "list": [{ "id": 0, "name": "Thomas", "score": 12, "ping": 31 }, { "id": 3, "name": "Sam", "score": 4, "ping": 58 }]},
  "branding": {"logo": null, "primary": "#ff8800", "secondary": null, "showName": false},
  "description": "Los Santos roleplay. Whitelisted; apply on the website.",
  "gamemode": "Roleplay", "language": "en", "tags": ["roleplay", "whitelist"],
  "links": { "website": "https://example.com", "discord": "https://discord.gg/example" },
  "values": { "map": "Los Santos", "copsOnDuty": 3 }}`
	var a, b any
	if err := json.Unmarshal([]byte(spec), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(EncodeJSON(PlayersList, 0, snapOf(t, exampleDoc), nil), &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("decoded JSON differs\n spec %v\n ours %v", a, b)
	}
}

func TestEncodeJSONPlayersModes(t *testing.T) {
	snap := snapOf(t, `{"name":"S","max_players":8,"players":{"5":{"name":"A"}}}`)
	tests := map[PlayersMode]string{
		PlayersList:  `{"query":1,"name":"S","version":"","protocol":0,"players":{"online":1,"max":8,"list":[{"id":5,"name":"A","score":0,"ping":0}]},"branding":{"logo":null,"primary":null,"secondary":null,"showName":false}}`,
		PlayersCount: `{"query":1,"name":"S","version":"","protocol":0,"players":{"online":1,"max":8},"branding":{"logo":null,"primary":null,"secondary":null,"showName":false}}`,
		PlayersNone:  `{"query":1,"name":"S","version":"","protocol":0,"branding":{"logo":null,"primary":null,"secondary":null,"showName":false}}`,
	}
	for mode, want := range tests {
		if got := string(EncodeJSON(mode, 0, snap, nil)); got != want {
			t.Errorf("mode %d\n got %s\nwant %s", mode, got, want)
		}
	}
	for s, want := range map[string]PlayersMode{"": PlayersList, "list": PlayersList, "count": PlayersCount, "none": PlayersNone} {
		if m, ok := ParsePlayersMode(s); !ok || m != want {
			t.Errorf("ParsePlayersMode(%q) = %d, %v", s, m, ok)
		}
	}
	if _, ok := ParsePlayersMode("all"); ok {
		t.Error(`ParsePlayersMode("all") accepted`)
	}
}

func TestEncodeJSONTruncates(t *testing.T) {
	snap := snapOf(t, manyPlayers(3000))
	js := EncodeJSON(PlayersList, DefaultMaxList, snap, nil)
	var info Info
	if err := json.Unmarshal(js, &info); err != nil {
		t.Fatal(err)
	}
	p := info.Players
	if !p.Truncated || p.Online != 3000 || len(p.List) == 0 || len(p.List) >= 3000 {
		t.Fatalf("online %d, listed %d, truncated %v", p.Online, len(p.List), p.Truncated)
	}
	list := js[strings.Index(string(js), `"list":[`)+len(`"list":[`) : strings.Index(string(js), `]`)]
	if len(list) > DefaultMaxList || len(list)+60 < DefaultMaxList {
		t.Fatalf("list of %d bytes for a budget of %d", len(list), DefaultMaxList)
	}
	for i, pl := range p.List {
		if pl.ID != uint32(i) {
			t.Fatalf("entry %d has id %d", i, pl.ID)
		}
	}
	full := EncodeJSON(PlayersList, DefaultMaxList, snapOf(t, manyPlayers(1000)), nil)
	if strings.Contains(string(full), "truncated") {
		t.Fatal("1,000 players were truncated")
	}
}

func TestAppendString(t *testing.T) {
	tests := map[string]string{
		"plain":              `"plain"`,
		`q"b\`:               `"q\"b\\"`,
		"a\nb\tc\rd\x01\x7f": `"a\nb\tc\rd\u0001\u007f"`,
		"Ünïcødé 🎮":          `"Ünïcødé 🎮"`,
		"bad\xffutf8":        `"bad\ufffdutf8"`,
		"ls\u2028ps\u2029":   `"ls\u2028ps\u2029"`,
		"<a&b>":              `"<a&b>"`,
	}
	for in, want := range tests {
		got := string(appendString(nil, in))
		if got != want {
			t.Errorf("appendString(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("%s is not JSON: %v", got, err)
		}
	}
}

// TestEncodeJSONUnknownPing: a player whose ping is unknown (negative in
// the state) has "ping": null; the client reads it as nil, and polling
// such a server gives the state an unknown ping again.
func TestEncodeJSONUnknownPing(t *testing.T) {
	snap := snapOf(t, `{"name":"S","max_players":8,"players":{"5":{"name":"Bot","ping":-1,"bot":true},"6":{"name":"B","score":2.0,"ping":40.0}}}`)
	js := EncodeJSON(PlayersList, 0, snap, nil)
	want := `"list":[{"id":5,"name":"Bot","score":0,"ping":null},{"id":6,"name":"B","score":2,"ping":40}]`
	if !strings.Contains(string(js), want) {
		t.Fatalf("got %s\nwant the list %s", js, want)
	}
	var in Info
	if err := json.Unmarshal(js, &in); err != nil {
		t.Fatal(err)
	}
	l := in.Players.List
	if l[0].Ping != nil || l[1].Ping == nil || *l[1].Ping != 40 {
		t.Fatalf("client read %+v", l)
	}
	s := polltest.Valid(t, FromInfo(&in))
	if s.Players[0].Ping != state.PingUnknown || s.Players[1].Ping != 40 {
		t.Fatalf("polled %+v", s.Players)
	}
}

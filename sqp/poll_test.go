package sqp

import (
	"maps"
	"testing"

	"github.com/queryd/queryd/internal/polltest"
)

// capturedResponse is go-svrquery's captured ServerInfo, ServerRules and
// PlayerInfo replies, each read as its own test reads it.
func capturedResponse(t testing.TB) *Response {
	t.Helper()
	chunk := func(name string, chunks byte) *Response {
		_, p, err := ParseHeader(vector(t, name))
		if err != nil {
			t.Fatal(err)
		}
		r, err := ParseResponse(p, chunks)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	r := chunk("info_single_response", ChunkServerInfo)
	r.Rules = chunk("rules_response", ChunkServerRules).Rules
	r.Players = chunk("player_response", ChunkPlayerInfo).Players
	return r
}

// go-svrquery's captured replies are read exactly: ServerInfo into the
// state's fields, every rule with its value in decimal, the players (whose
// fields are none of name, score and ping) as two unnamed players.
func TestFromResponseCaptured(t *testing.T) {
	s := polltest.Valid(t, FromResponse(capturedResponse(t)))
	if s.Name != "my server" || s.Gamemode != "ctf" || s.GameVersion != "1" || s.Map != "map" || s.GamePort != 1025 || s.MaxPlayers != 10 || len(s.Players) != 2 {
		t.Errorf("%+v", s)
	}
	want := map[string]string{"rule 1": "128", "rule 2": "257", "rule 3": "16777217", "rule 4": "72057594037927937", "rule 5": "string"}
	got := polltest.Rules(s)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("rule %q = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rules %v", got)
	}
}

// SQP's value types map to the state's text: u8 0 and 1 as "false" and
// "true" (queryd's booleans), other numbers in decimal, a u32 score as
// int32, non-ASCII names kept.
func TestFromResponseRoundTrip(t *testing.T) {
	r := &Response{
		Info:    &ServerInfo{CurrentPlayers: 9, MaxPlayers: 64, ServerName: "n"},
		Rules:   []Rule{{"t", Value{Type: Uint8, Uint: 1}}, {"f", Value{Type: Uint8, Uint: 0}}, {"b", Value{Type: Uint8, Uint: 7}}},
		Players: &Table{Fields: []Field{{"name", String}, {"score", Uint32}, {"ping", Uint16}}, Rows: [][]Value{{{Type: String, Str: "Łukasz"}, {Type: Uint32, Uint: 4294967295}, {Type: Uint16, Uint: 65535}}}},
	}
	s := polltest.Valid(t, FromResponse(r))
	rules := polltest.Rules(s)
	if rules["t"] != "true" || rules["f"] != "false" || rules["b"] != "7" || len(s.Players) != 1 ||
		s.Players[0].Name != "Łukasz" || s.Players[0].Score != -1 || s.Players[0].Ping != 65535 {
		t.Errorf("%+v %v", s, rules)
	}
	if s.SQP != nil {
		t.Errorf("sqp object %+v, want none: nothing without a place", s.SQP)
	}
	// TeamInfo's teams and the players' other fields are kept in the "sqp"
	// object's "other", never as rules.
	r.Teams = &Table{Fields: []Field{{"name", String}, {"score", Uint16}}, Rows: [][]Value{{{Type: String, Str: "red"}, {Type: Uint16, Uint: 4}}}}
	r.Players.Fields = append(r.Players.Fields, Field{"team", Uint8})
	r.Players.Rows[0] = append(r.Players.Rows[0], Value{Type: Uint8, Uint: 2})
	s = polltest.Valid(t, FromResponse(r))
	other := map[string]string{}
	for _, kv := range s.SQP.Other {
		other[kv.Key] = kv.Value
	}
	want := map[string]string{"teams": "1", "team.0.name": "red", "team.0.score": "4", "player.0.team": "2"}
	if rules := polltest.Rules(s); len(rules) != 3 || !maps.Equal(other, want) {
		t.Errorf("rules %v; sqp.other %v, want %v", rules, other, want)
	}
	// Without PlayerInfo, ServerInfo's count gives unnamed players.
	r.Players = nil
	if s := polltest.Valid(t, FromResponse(r)); len(s.Players) != 9 {
		t.Errorf("%d players, want 9", len(s.Players))
	}
}

package sagl

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/queryd/queryd/internal/polltest"
)

// richJSON is a SAGL JSON with every field, some of them values the state
// refuses.
const richJSON = `{"query":1,"name":"Example RP","version":"0.2.0","protocol":102,
"players":{"online":3,"max":50,"list":[{"id":7,"name":"Thomas","score":12,"ping":31},{"id":9,"name":"Zoë","score":-4,"ping":70000}]},
"branding":{"logo":{"sha256":"ab12","size":3},"primary":"#FF8800","secondary":"orange","showName":true},
"description":"RP","gamemode":"Roleplay","language":"en","tags":["roleplay","eu"],
"links":{"website":"https://example.com","bad":"javascript:alert(1)"},
"values":{"copsOnDuty":3,"map":"Los Santos","open":true,"none":null,"nested":{"a":1}}}`

// Every field of the JSON goes to its state field, players keyed by their
// own ids; what the state refuses is kept as text in the "sagl" object's
// "other", nothing is lost, and nothing is a rule (the JSON has none).
func TestFromInfo(t *testing.T) {
	var in Info
	if err := json.Unmarshal([]byte(richJSON), &in); err != nil {
		t.Fatal(err)
	}
	s := polltest.Valid(t, FromInfo(&in))
	r := polltest.Rules(s)
	if s.Name != "Example RP" || s.GameVersion != "0.2.0" || s.Protocol != 102 || s.MaxPlayers != 50 || len(s.Players) != 2 ||
		s.Players[1].Name != "Zoë" || s.Players[1].Score != -4 || s.Players[1].Ping != 65535 || s.Description != "RP" ||
		s.Gamemode != "Roleplay" || s.Language != "en" || len(s.Tags) != 2 || len(s.Links) != 1 || s.Links[0].URL != "https://example.com" ||
		s.Branding.Primary != "#ff8800" || s.Branding.Secondary != "" || !s.Branding.ShowName || len(s.Values) != 4 {
		t.Errorf("%+v", s)
	}
	if len(r) != 0 {
		t.Errorf("rules %v, want none", r)
	}
	if s.Players[0].ID != 7 || s.Players[1].ID != 9 {
		t.Errorf("player ids %d, %d, want the server's 7, 9", s.Players[0].ID, s.Players[1].ID)
	}
	other := map[string]string{}
	for _, kv := range s.SAGL.Other {
		other[kv.Key] = kv.Value
	}
	want := map[string]string{OtherOnline: "3", OtherLogoSHA256: "ab12", OtherLogoSize: "3", "links.bad": "javascript:alert(1)",
		"branding.secondary": "orange", "values.nested": `{"a":1}`}
	if !maps.Equal(other, want) {
		t.Errorf("sagl.other %v, want %v", other, want)
	}
}

// Ids the state cannot key players by (one taken twice) leave the players
// keyed by place, for the poller to give them ids.
func TestFromInfoRepeatedIDs(t *testing.T) {
	list := []PlayerInfo{{ID: 4, Name: "a"}, {ID: 4, Name: "b"}, {ID: 1, Name: "c"}}
	if idsUsable(list) {
		t.Fatal("a repeated id is usable")
	}
	players := FromInfo(&Info{Players: &Players{Online: 3, List: list}})["players"].(map[string]any)
	if len(players) != 3 || players["0"] == nil || players["2"] == nil {
		t.Errorf("players %v, want keyed by place", players)
	}
}

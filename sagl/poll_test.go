package sagl

import (
	"encoding/json"
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

// Every field of the JSON goes to its state field; what the state refuses
// is a rule, nothing is lost.
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
	for k, v := range map[string]string{RuleOnline: "3", RuleLogoSHA256: "ab12", "sagl_links.bad": "javascript:alert(1)",
		"sagl_branding.secondary": "orange", "sagl_values.nested": `{"a":1}`} {
		if r[k] != v {
			t.Errorf("rule %s = %q, want %q (rules %v)", k, r[k], v, r)
		}
	}
}

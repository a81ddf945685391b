package a2s

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/state"
)

// srcdsInfo is an A2S_INFO a TF2-like srcds sends: every EDF field.
func srcdsInfo() *Info {
	return &Info{
		Protocol: 17, Name: "Example | 2Fort 24/7", Map: "ctf_2fort", Folder: "tf", Game: "Team Fortress",
		AppID: 440, Players: 3, MaxPlayers: 24, Bots: 1, ServerType: "d", Environment: "l", VAC: true,
		Version: "8835751", EDF: 0xF1, Port: 27015, SteamID: 90071992547409920, SourceTVPort: 27020,
		SourceTVName: "SourceTV", Keywords: "alltalk,cp,increased_maxplayers", GameID: 440,
	}
}

// An A2S answer: INFO's fields, EDF included; players with durations, the
// INFO bot count marking those connected longest; rules, plus the INFO
// fields the state has no place for.
func TestFromA2S(t *testing.T) {
	players := []PlayerInfo{
		{Name: "Alice", Score: 12, Duration: 600.25},
		{Name: "BOT Bob", Score: 3, Duration: 3600},
		{Name: "", Score: -1, Duration: 5},
	}
	doc := FromA2S(srcdsInfo(), players, [][2]string{{"mp_timelimit", "30"}, {"a2s_app_id", "the server's own"}})
	snap := polltest.Valid(t, doc)
	if snap.Name != "Example | 2Fort 24/7" || snap.Map != "ctf_2fort" || snap.Folder != "tf" || snap.Game != "Team Fortress" ||
		snap.GameVersion != "8835751" || snap.MaxPlayers != 24 || !snap.VAC || snap.Password || snap.ServerType != "dedicated" ||
		snap.OS != "linux" || snap.GamePort != 27015 || snap.SteamID != 90071992547409920 || snap.Keywords != "alltalk,cp,increased_maxplayers" ||
		snap.SourceTV == nil || *snap.SourceTV != (state.SourceTV{Port: 27020, Name: "SourceTV"}) {
		t.Errorf("fields %+v", snap)
	}
	want := map[string]map[string]any{
		"0": {"name": "Alice", "score": json.Number("12"), "time": json.Number("600.25")},
		"1": {"name": "BOT Bob", "score": json.Number("3"), "time": json.Number("3600"), "bot": true},
		"2": {"name": "", "score": json.Number("-1"), "time": json.Number("5")},
	}
	for k, w := range want {
		if got := doc["players"].(map[string]any)[k]; !reflect.DeepEqual(got, map[string]any(w)) {
			t.Errorf("player %s: %v, want %v", k, got, w)
		}
	}
	rules := doc["rules"].(map[string]any)
	if !reflect.DeepEqual(rules, map[string]any{"mp_timelimit": "30", "a2s_app_id": "the server's own", "a2s_protocol": "17", "a2s_game_id": "440"}) {
		t.Errorf("rules %v (the server's own rule of the same name wins)", rules)
	}
}

// Odd A2S values: unknown server type and environment are left out (the
// state's defaults), a NaN, negative or huge duration gives no time, more
// bots than players marks them all, an empty EDF leaves its fields out.
func TestFromA2SOddValues(t *testing.T) {
	info := &Info{Name: "n\xff", ServerType: "x", Environment: "O", Bots: 9, MaxPlayers: 255}
	players := []PlayerInfo{
		{Name: "a", Duration: float32(math.NaN())}, {Name: "b", Duration: -1}, {Name: "c", Duration: float32(math.Inf(1))},
	}
	doc := FromA2S(info, players, nil)
	snap := polltest.Valid(t, doc)
	if snap.Name != "n\uFFFD" || snap.ServerType != "dedicated" || snap.OS != "mac" || snap.Bots() != 3 || snap.MaxPlayers != 255 {
		t.Errorf("%+v", snap)
	}
	for k, p := range doc["players"].(map[string]any) {
		if _, ok := p.(map[string]any)["time"]; ok {
			t.Errorf("player %s has a time: %v", k, p)
		}
	}
	for _, k := range []string{"game_port", "steam_id", "sourcetv", "keywords", "server_type"} {
		if _, ok := doc[k]; ok {
			t.Errorf("%s set: %v", k, doc[k])
		}
	}
}

package a2s

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/internal/udptest"
	"github.com/queryd/queryd/module"
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
// INFO bot count marking those connected longest; A2S_RULES as the rules
// and nothing else (a rule named like the old a2s_app_id is the server's
// own); INFO's protocol, app id and game id in the "a2s" object.
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
	if !reflect.DeepEqual(rules, map[string]any{"mp_timelimit": "30", "a2s_app_id": "the server's own"}) {
		t.Errorf("rules %v, want A2S_RULES and nothing else", rules)
	}
	if a := snap.A2S; a == nil || a.AppID != 440 || a.Protocol != 17 || !a.HasGameID || a.GameID != 440 {
		t.Errorf("a2s object %+v", a)
	}
	cfg := Config{AppID: DefaultAppID, Protocol: 48, GameID: 7}.For(snap)
	if cfg.AppID != 440 || cfg.Protocol != 17 || cfg.GameID != 440 {
		t.Errorf("the front's INFO numbers %+v, want the server's", cfg)
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
	// No EDF game id: the front sends none either, whatever [a2s] game_id says.
	if cfg := (Config{GameID: 7}).For(snap); cfg.GameID != 0 || cfg.AppID != 0 || len(snap.Rules) != 0 {
		t.Errorf("the front's INFO numbers %+v, rules %v", cfg, snap.Rules)
	}
}

// infoReply is an A2S_INFO reply of name with players players.
func infoReply(name string, players byte) []byte {
	return append([]byte("\xFF\xFF\xFF\xFFI\x11"+name+"\x00map\x00tf\x00Team Fortress\x00\xb8\x01"), players, 24, 0, 'd', 'l', 0, 1, 'v', '1', 0)
}

// playersOf is an A2S_PLAYER reply listing names.
func playersOf(names ...string) []byte {
	b := []byte{0xFF, 0xFF, 0xFF, 0xFF, ReplyPlayer, byte(len(names))}
	for i, n := range names {
		b = append(append(append(b, byte(i)), n...), 0, 1, 0, 0, 0, 0, 0, 0x80, 0x3f)
	}
	return b
}

// pollAt polls the scripted server at addr.
func pollAt(t *testing.T, addr string) (module.Polled, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return Module{}.Poll(ctx, netip.MustParseAddrPort(addr), module.PollOptions{Timeout: 500 * time.Millisecond})
}

// A2S_INFO has no nonce, so its player count is checked against
// A2S_PLAYER's: an INFO that disagrees and then answers otherwise (a
// forged one met the real PLAYER) makes the poll a bad answer; a server
// whose counts disagree the same way twice, and one whose second INFO
// agrees, are read.
func TestPollCountsAgree(t *testing.T) {
	for name, c := range map[string]struct {
		infos  [][]byte
		wantOK string // the name read; "" for a bad answer
	}{
		"forged first INFO":        {[][]byte{infoReply("INJECTED", 99), infoReply("real", 2)}, "real"},
		"two INFOs, neither agree": {[][]byte{infoReply("INJECTED", 99), infoReply("real", 5)}, ""},
		"the same INFO twice":      {[][]byte{infoReply("hidden players", 9), infoReply("hidden players", 9)}, "hidden players"},
	} {
		t.Run(name, func(t *testing.T) {
			var n atomic.Int64
			addr := udptest.Answer(t, func(req []byte) [][]byte {
				switch {
				case len(req) < 5:
				case req[4] == TypeInfo:
					return [][]byte{c.infos[min(int(n.Add(1))-1, len(c.infos)-1)]}
				case req[4] == TypePlayer:
					return [][]byte{playersOf("Ann", "Bob")}
				case req[4] == TypeRules:
					return [][]byte{[]byte("\xFF\xFF\xFF\xFFE\x00\x00")}
				}
				return nil
			})
			got, err := pollAt(t, addr)
			var bad module.BadAnswer
			switch {
			case c.wantOK == "" && !errors.As(err, &bad):
				t.Fatalf("err %v, want a bad answer", err)
			case c.wantOK == "":
			case err != nil:
				t.Fatal(err)
			case got.Doc["name"] != c.wantOK:
				t.Fatalf("name %v, want %q", got.Doc["name"], c.wantOK)
			}
		})
	}
}

// A GoldSrc server's split A2S_PLAYER (its own layout) is read by a poll;
// unanswered A2S_RULES makes the answer partial, naming "rules".
func TestPollGoldSrcSplitPlayers(t *testing.T) {
	names := make([]string, 80)
	for i := range names {
		names[i] = strings.Repeat("n", 30) + strconv.Itoa(i)
	}
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		switch {
		case len(req) < 5:
		case req[4] == TypeInfo:
			return [][]byte{infoReply("goldsrc", 80)}
		case req[4] == TypePlayer:
			return goldsrcFragments(7, playersOf(names...), 1391)
		}
		return nil
	})
	got, err := pollAt(t, addr)
	if err != nil {
		t.Fatal(err)
	}
	if s := polltest.Valid(t, got.Doc); len(s.Players) != 80 || s.Players[79].Name != names[79] {
		t.Fatalf("%d players", len(s.Players))
	}
	if !slices.Equal(got.Unanswered, []string{"rules"}) || got.Partial == nil {
		t.Errorf("unanswered %v, partial %v", got.Unanswered, got.Partial)
	}
}

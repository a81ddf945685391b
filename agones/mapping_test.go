package agones

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/queryd/queryd/state"
)

// mapJSON parses a GameServer (the JSON GET /gameserver answers) and maps
// it with m and no ids yet; the document must be one the state takes.
func mapJSON(t *testing.T, gs string, m Mapping) map[string]any {
	t.Helper()
	g, err := parseGameServer([]byte(gs))
	if err != nil {
		t.Fatalf("parse %s: %v", gs, err)
	}
	doc, _ := mapGameServer(g, m, playerIDs{})
	if err := state.Validate(doc); err != nil {
		t.Fatalf("the mapped document is refused: %v\n%v", err, doc)
	}
	return doc
}

// js turns a document into its JSON, keys sorted, for comparison.
func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var defaultMapping = Mapping{List: "players", Counter: "players", Port: "default"}

func TestMapping(t *testing.T) {
	for _, c := range []struct {
		name string
		gs   string
		m    Mapping
		want string
	}{{
		"nothing set",
		`{"object_meta":{"name":"x"},"status":{"state":"Ready"}}`, defaultMapping,
		`{}`,
	}, {
		"the manifest's annotations and labels; annotation wins over label",
		`{"object_meta":{"annotations":{"queryd.dev/name":"Ann","queryd.dev/map":"m1","queryd.dev/rule.r":"1"},
		  "labels":{"queryd.dev/name":"Lab","queryd.dev/game":"g","queryd.dev/rule.r":"2","queryd.dev/rule.s":"3"}},
		  "status":{"state":"Ready"}}`, defaultMapping,
		`{"game":"g","map":"m1","name":"Ann","rules":{"r":"1","s":"3"}}`,
	}, {
		"the game's (SDK) values win over the manifest's, annotation over label",
		`{"object_meta":{"annotations":{"queryd.dev/name":"Manifest","agones.dev/sdk-rule.r":"game","queryd.dev/rule.r":"manifest"},
		  "labels":{"agones.dev/sdk-name":"GameLabel","agones.dev/sdk-map":"de_dust2","queryd.dev/map":"lobby"}},
		  "status":{"state":"Ready"}}`, defaultMapping,
		`{"map":"de_dust2","name":"GameLabel","rules":{"r":"game"}}`,
	}, {
		"other prefixes and plain keys are not read",
		`{"object_meta":{"annotations":{"name":"no","agones.dev/name":"no","queryd.dev/unknown":"x","example.com/map":"no"}},
		  "status":{"state":"Ready"}}`, defaultMapping,
		`{}`,
	}, {
		"typed fields: a value the state refuses falls to the next place",
		`{"object_meta":{"annotations":{"agones.dev/sdk-max_players":"lots","queryd.dev/max_players":"24",
		  "queryd.dev/password":"true","queryd.dev/vac":"maybe","queryd.dev/server_type":"listen","queryd.dev/environment":"amiga",
		  "queryd.dev/tags":"pvp, eu ,,casual","queryd.dev/steam_id":"90071992547409921","queryd.dev/protocol":"47",
		  "queryd.dev/game_port":"70000"}},"status":{"state":"Ready"}}`, defaultMapping,
		`{"max_players":24,"password":true,"protocol":47,"server_type":"listen","steam_id":"90071992547409921","tags":["pvp","eu","casual"]}`,
	}, {
		"the List: values as names, capacity as max_players; annotation max_players wins",
		`{"object_meta":{"annotations":{"queryd.dev/max_players":"10"}},"status":{"state":"Allocated",
		  "counters":{"players":{"count":"5","capacity":"64"}},
		  "lists":{"players":{"capacity":"32","values":["alice","bob"]}}}}`, defaultMapping,
		`{"max_players":10,"players":{"0":{"name":"alice"},"1":{"name":"bob"}}}`,
	}, {
		"the Counter when there is no List: count players without names",
		`{"status":{"state":"Ready","counters":{"players":{"count":"3","capacity":"16"}},"lists":{"other":{"values":["x"]}}}}`, defaultMapping,
		`{"max_players":16,"players":{"0":{"name":""},"1":{"name":""},"2":{"name":""}}}`,
	}, {
		"List and Counter named otherwise; List off",
		`{"status":{"state":"Ready","counters":{"seats":{"count":"1","capacity":"2"}},"lists":{"players":{"values":["x"]}}}}`,
		Mapping{Counter: "seats"},
		`{"max_players":2,"players":{"0":{"name":""}}}`,
	}, {
		"numbers as JSON numbers, out of range clamped",
		`{"status":{"state":"Ready","counters":{"players":{"count":-4,"capacity":9999999}}}}`, defaultMapping,
		`{"max_players":65535,"players":{}}`,
	}, {
		"game_port from the named status port",
		`{"status":{"state":"Ready","ports":[{"name":"query","port":"27015"},{"name":"default","port":7777}]}}`, defaultMapping,
		`{"game_port":7777}`,
	}, {
		"objectMeta in lowerCamelCase",
		`{"objectMeta":{"annotations":{"queryd.dev/name":"camel"}},"status":{"state":"Ready"}}`, defaultMapping,
		`{"name":"camel"}`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			got := js(t, mapJSON(t, c.gs, c.m))
			var want any
			if err := json.Unmarshal([]byte(c.want), &want); err != nil {
				t.Fatal(err)
			}
			if w := js(t, want); got != w {
				t.Errorf("got  %s\nwant %s", got, w)
			}
		})
	}
}

// TestMappingFits: text past the state's limits is cut, invalid UTF-8
// and NUL made valid, and too many values kept to the state's limits.
func TestMappingFits(t *testing.T) {
	long := strings.Repeat("é", 300)
	values := make([]string, state.MaxPlayers+10)
	for i := range values {
		values[i] = strings.Repeat("n", i%100)
	}
	ann := map[string]string{
		"queryd.dev/name": long, "queryd.dev/map": "bad\xffutf8\x00nul",
		"queryd.dev/rule." + strings.Repeat("k", 200): "long key", "queryd.dev/rule.": "empty key",
		"queryd.dev/rule.v": long,
	}
	for i := range state.MaxRules + 5 {
		ann["queryd.dev/rule.r"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+strings.Repeat("y", i/26)] = "v"
	}
	gs := &gameServer{ObjectMeta: &objectMeta{Annotations: ann},
		Status: &gsStatus{State: "Ready", Lists: map[string]list{"players": {Capacity: 1 << 40, Values: values}}}}
	doc, _ := mapGameServer(gs, defaultMapping, playerIDs{})
	if err := state.Validate(doc); err != nil {
		t.Fatalf("refused: %v", err)
	}
	if n := len([]rune(doc["name"].(string))); n != state.MaxNameLen {
		t.Errorf("name of %d characters, want cut to %d", n, state.MaxNameLen)
	}
	if doc["map"] != "bad\uFFFDutf8nul" {
		t.Errorf("map %q", doc["map"])
	}
	if n := len(doc["players"].(map[string]any)); n != state.MaxPlayers {
		t.Errorf("%d players, want %d", n, state.MaxPlayers)
	}
	if n := len(doc["rules"].(map[string]any)); n != state.MaxRules {
		t.Errorf("%d rules, want %d", n, state.MaxRules)
	}
}

// TestPlayerIDs: a List player keeps its id while others come and go; a
// new one takes a number not in use; the input ids are not changed.
func TestPlayerIDs(t *testing.T) {
	var ids playerIDs
	step := func(values []string, want []uint32) {
		t.Helper()
		before := ids
		got, next := ids.assign(values)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("assign(%q) = %v, want %v", values, got, want)
		}
		if !reflect.DeepEqual(before, ids) {
			t.Fatalf("assign changed its receiver")
		}
		ids = next
	}
	step([]string{"alice", "bob"}, []uint32{0, 1})
	step([]string{"bob"}, []uint32{1})
	step([]string{"bob", "carol", "alice"}, []uint32{1, 2, 3})
	step([]string{"dup", "dup", "bob"}, []uint32{4, 5, 1})
	step([]string{"dup"}, []uint32{4})
}

func TestClassOf(t *testing.T) {
	for st, want := range map[string]Class{
		"Scheduled": ClassStarting, "RequestReady": ClassStarting, "Creating": ClassStarting, "PortAllocation": ClassStarting, "Starting": ClassStarting,
		"Ready": ClassAnswering, "Allocated": ClassAnswering, "Reserved": ClassAnswering,
		"Shutdown": ClassSilent, "Unhealthy": ClassSilent, "Error": ClassSilent,
		"": ClassSilent, "Draining": ClassSilent, "ready": ClassSilent,
	} {
		if got := ClassOf(st); got != want {
			t.Errorf("ClassOf(%q) = %s, want %s", st, got, want)
		}
	}
}

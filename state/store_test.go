package state

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func doc(t testing.TB, s string) map[string]any {
	t.Helper()
	m, err := DecodeJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newStore(t testing.TB, base string) (*Store, *clock) {
	t.Helper()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	s, err := NewStore(doc(t, base), c.now)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func names(s *Snapshot) []string {
	var out []string
	for _, p := range s.Players {
		out = append(out, p.Name)
	}
	return out
}

func TestReplaceFallsBackToBase(t *testing.T) {
	s, _ := newStore(t, `{"name":"base","map":"m0","max_players":8,"players":{"1":{"name":"x"}}}`)
	if v := s.Snapshot().Version; v != 1 {
		t.Fatalf("first version %d", v)
	}
	v, err := s.Replace(doc(t, `{"map":"m1"}`))
	if err != nil || v != 2 {
		t.Fatal(v, err)
	}
	snap := s.Snapshot()
	if snap.Name != "base" || snap.Map != "m1" || snap.MaxPlayers != 8 {
		t.Fatalf("%+v", snap)
	}
	if len(snap.Players) != 0 {
		t.Fatal("a replace without players must leave no players")
	}
}

func TestPatch(t *testing.T) {
	s, c := newStore(t, `{"name":"base","map":"m0"}`)
	s.Replace(doc(t, `{"name":"fed","players":{"5":{"name":"e"},"3":{"name":"c","time":100}}}`))
	if got := names(s.Snapshot()); !reflect.DeepEqual(got, []string{"c", "e"}) {
		t.Fatalf("new players in id order: %v", got)
	}
	c.t = c.t.Add(10 * time.Second)
	if _, err := s.Patch(doc(t, `{"players":{"1":{"name":"a"},"3":{"score":7}},"map":"m2"}`)); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if got := names(snap); !reflect.DeepEqual(got, []string{"c", "e", "a"}) {
		t.Fatalf("first-seen order: %v", got)
	}
	p := snap.Players[0]
	if p.Score != 7 || c.t.Sub(p.Since) != 110*time.Second {
		t.Fatalf("patched player %+v: score 7 and connected 110 s expected (since %v)", p, c.t.Sub(p.Since))
	}
	if snap.Players[1].Since != c.t.Add(-10*time.Second) {
		t.Fatal("a player without time counts from when it was first seen")
	}
	if snap.Map != "m2" || snap.Name != "fed" {
		t.Fatalf("%+v", snap)
	}
	// Removing a top-level field falls back to the base.
	s.Patch(doc(t, `{"map":null}`))
	if s.Snapshot().Map != "m0" {
		t.Fatal("map removed by the feed must fall back to [server]")
	}
	s.Patch(doc(t, `{"players":{"3":null}}`))
	if got := names(s.Snapshot()); !reflect.DeepEqual(got, []string{"e", "a"}) {
		t.Fatalf("after removing 3: %v", got)
	}
	// A player who leaves and comes back is new: last in order.
	s.Patch(doc(t, `{"players":{"3":{"name":"c"}}}`))
	if got := names(s.Snapshot()); !reflect.DeepEqual(got, []string{"e", "a", "c"}) {
		t.Fatalf("rejoined: %v", got)
	}
	s.Patch(doc(t, `{"players":null}`))
	if len(s.Snapshot().Players) != 0 {
		t.Fatal("players: null leaves no players")
	}
}

func TestRejectedChangesNothing(t *testing.T) {
	s, _ := newStore(t, `{"name":"base"}`)
	s.Replace(doc(t, `{"name":"ok","players":{"1":{"name":"a","score":1}}}`))
	before := s.Snapshot()
	called := 0
	s.Subscribe(func(*Snapshot) { called++ })
	for _, bad := range []string{
		`{"players":{"1":{"score":1.5}}}`,
		`{"players":{"x":{"name":"a"}}}`,
		`{"name":7}`,
		`{"nope":1}`,
		`{"players":{"2":{"name":"b"}},"max_players":-1}`,
	} {
		if _, err := s.Patch(doc(t, bad)); err == nil {
			t.Errorf("patch %s accepted", bad)
		}
		if _, err := s.Replace(doc(t, bad)); err == nil {
			t.Errorf("replace %s accepted", bad)
		}
	}
	if s.Snapshot() != before || called != 1 {
		t.Fatal("a rejected change must publish nothing")
	}
	// The players seen table is untouched too: the next accepted patch keeps order.
	s.Patch(doc(t, `{"players":{"0":{"name":"z"}}}`))
	if got := names(s.Snapshot()); !reflect.DeepEqual(got, []string{"a", "z"}) {
		t.Fatalf("%v", got)
	}
}

func TestSetBase(t *testing.T) {
	s, _ := newStore(t, `{"name":"base","map":"m0"}`)
	s.Patch(doc(t, `{"map":"fed"}`))
	if err := s.SetBase(doc(t, `{"name":"new base","map":"m9"}`)); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if snap.Name != "new base" || snap.Map != "fed" {
		t.Fatalf("after SetBase: %q %q", snap.Name, snap.Map)
	}
	if err := s.SetBase(doc(t, `{"name":1}`)); err == nil || s.Snapshot() != snap {
		t.Fatal("an invalid base must be rejected and change nothing")
	}
}

func TestDocumentRoundTrip(t *testing.T) {
	s, _ := newStore(t, `{"name":"base"}`)
	s.Patch(doc(t, `{"values":{"big":12345678901234567890,"f":1.5,"s":"x","n":null}}`))
	var got map[string]any
	if err := json.Unmarshal(s.Snapshot().Document(), &got); err != nil {
		t.Fatal(err)
	}
	if got["name"] != "base" || !strings.Contains(string(s.Snapshot().Document()), "12345678901234567890") {
		t.Fatalf("%s", s.Snapshot().Document())
	}
}

func TestDecodeErrors(t *testing.T) {
	long := strings.Repeat("x", 257)
	for _, tc := range []struct{ doc, path string }{
		{`{"folder":"` + long + `"}`, "folder"},
		{`{"name":"a\u0000b"}`, "name"},
		{`{"max_players":65536}`, "max_players"},
		{`{"players":[]}`, "players"},
		{`{"players":{"01":{}}}`, "players.01"},
		{`{"players":{"4294967296":{}}}`, "players.4294967296"},
		{`{"players":{"1":{"name":"a","x":1}}}`, "players.1.x"},
		{`{"players":{"1":{"ping":-1.5}}}`, "players.1.ping"},
		{`{"players":{"1":{"time":-5}}}`, "players.1.time"},
		{`{"players":{"1":{"bot":"yes"}}}`, "players.1.bot"},
		{`{"rules":{"a":[1]}}`, "rules.a"},
		{`{"rules":{"":"x"}}`, "rules."},
		{`{"values":{"a":{"b":1}}}`, "values.a"},
		{`{"values":{"` + long + `":"a"}}`, "values." + long},
		{`{"tags":["a",1]}`, "tags.1"},
		{`{"links":{"web":"ftp://x"}}`, "links.web"},
		{`{"links":{"web":"javascript:alert(1)"}}`, "links.web"},
		{`{"branding":{"primary":"red"}}`, "branding.primary"},
		{`{"server_type":"cloud"}`, "server_type"},
		{`{"steam_id":"-1"}`, "steam_id"},
		{`{"sourcetv":{"name":"x"}}`, "sourcetv.port"},
		{`{"links":{"web":"https://example.com/` + strings.Repeat("é", 500) + `"}}`, "links.web"},
	} {
		err := Validate(doc(t, tc.doc))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Path != tc.path {
			t.Errorf("%.60s: got %v, want an error at %q", tc.doc, err, tc.path)
		}
	}
}

func TestLimitsAccepted(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"players":{`)
	for i := 0; i < MaxPlayers; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + itoa(i) + `":{"name":"p"}`)
	}
	b.WriteString(`}}`)
	if err := Validate(doc(t, b.String())); err != nil {
		t.Fatal(err)
	}
	too := strings.Replace(b.String(), `{"players":{`, `{"players":{"99999":{},`, 1)
	if err := Validate(doc(t, too)); err == nil {
		t.Fatal("4,097 players accepted")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// RFC 7386 appendix A.
func TestMergePatchRFC7386(t *testing.T) {
	for _, tc := range [][3]string{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	} {
		var target, patch, want any
		json.Unmarshal([]byte(tc[0]), &target)
		json.Unmarshal([]byte(tc[1]), &patch)
		json.Unmarshal([]byte(tc[2]), &want)
		orig, _ := json.Marshal(target)
		got := MergePatch(target, patch)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s + %s = %v, want %s", tc[0], tc[1], got, tc[2])
		}
		if after, _ := json.Marshal(target); string(after) != string(orig) {
			t.Errorf("MergePatch modified its target: %s -> %s", orig, after)
		}
	}
}

// TestSetAsleep: asleep, every snapshot has no players and every other
// field as the layers make it (a change of a layer while asleep too);
// awake again, the layers' players come back; a call that changes
// nothing makes no snapshot.
func TestSetAsleep(t *testing.T) {
	s, _ := newStore(t, `{"name":"base","map":"m0","max_players":8,"players":{"1":{"name":"cfg"}}}`)
	if _, err := s.SetGameServer(doc(t, `{"name":"game","rules":{"g":"1"},"players":{"2":{"name":"bot","bot":true}}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Replace(doc(t, `{"map":"m1","players":{"3":{"name":"fed"}}}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetAsleep(true); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if len(snap.Players) != 0 || snap.Name != "game" || snap.Map != "m1" || len(snap.Rules) != 1 || snap.Rules[0] != (Rule{"g", "1"}) {
		t.Fatalf("asleep: %+v", snap)
	}
	if !strings.Contains(string(snap.Document()), `"players":{}`) {
		t.Errorf("asleep: the document's players: %s", snap.Document())
	}
	v := snap.Version
	if err := s.SetAsleep(true); err != nil || s.Snapshot().Version != v {
		t.Fatalf("SetAsleep(true) again: %v, version %d → %d", err, v, s.Snapshot().Version)
	}
	if _, err := s.SetGameServer(doc(t, `{"name":"game2","players":{"2":{"name":"bot","bot":true}}}`)); err != nil {
		t.Fatal(err)
	}
	if snap := s.Snapshot(); len(snap.Players) != 0 {
		t.Fatalf("a new upstream answer while asleep: %v", names(snap))
	}
	if err := s.SetAsleep(false); err != nil {
		t.Fatal(err)
	}
	if got := names(s.Snapshot()); len(got) != 1 || got[0] != "fed" {
		t.Fatalf("awake: players %v, want the feed's", got)
	}
}

package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestIntegralFloatsAccepted: every integer field takes an integral float
// (what json.dumps(3.0) writes), stores the integer and keeps the integer
// in the document.
func TestIntegralFloatsAccepted(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		got  func(*Snapshot) any
		want any
		path []string // where the document keeps it
		kept string   // as what
	}{
		{`{"max_players":3.0}`, func(s *Snapshot) any { return s.MaxPlayers }, 3, []string{"max_players"}, "3"},
		{`{"max_players":3e0}`, func(s *Snapshot) any { return s.MaxPlayers }, 3, []string{"max_players"}, "3"},
		{`{"max_players":65535.000}`, func(s *Snapshot) any { return s.MaxPlayers }, 65535, []string{"max_players"}, "65535"},
		{`{"max_players":-0.0}`, func(s *Snapshot) any { return s.MaxPlayers }, 0, []string{"max_players"}, "0"},
		{`{"protocol":1.02e2}`, func(s *Snapshot) any { return s.Protocol }, 102, []string{"protocol"}, "102"},
		{`{"game_port":27015.0}`, func(s *Snapshot) any { return s.GamePort }, uint16(27015), []string{"game_port"}, "27015"},
		{`{"sourcetv":{"port":2.702e4}}`, func(s *Snapshot) any { return s.SourceTV.Port }, uint16(27020), []string{"sourcetv", "port"}, "27020"},
		{`{"steam_id":76561198000000001.0}`, func(s *Snapshot) any { return s.SteamID }, uint64(76561198000000001), []string{"steam_id"}, "76561198000000001"},
		{`{"steam_id":7.6561198e16}`, func(s *Snapshot) any { return s.SteamID }, uint64(76561198000000000), []string{"steam_id"}, "76561198000000000"},
		{`{"players":{"3":{"score":-2147483648.0}}}`, func(s *Snapshot) any { return s.Players[0].Score }, int32(-2147483648), []string{"players", "3", "score"}, "-2147483648"},
		{`{"players":{"3":{"score":12e0}}}`, func(s *Snapshot) any { return s.Players[0].Score }, int32(12), []string{"players", "3", "score"}, "12"},
		{`{"players":{"3":{"ping":31.0}}}`, func(s *Snapshot) any { return s.Players[0].Ping }, int32(31), []string{"players", "3", "ping"}, "31"},
	} {
		s, _ := newStore(t, `{}`)
		r, err := s.Put(doc(t, tc.doc))
		if err != nil {
			t.Errorf("%s: %v", tc.doc, err)
			continue
		}
		if len(r.Warnings) != 0 {
			t.Errorf("%s: warnings %v (an integral float is no cut)", tc.doc, r.Warnings)
		}
		snap := s.Snapshot()
		if got := tc.got(snap); got != tc.want {
			t.Errorf("%s: stored %v (%T), want %v", tc.doc, got, got, tc.want)
		}
		if got := docAt(t, snap, tc.path); got != json.Number(tc.kept) {
			t.Errorf("%s: document keeps %#v, want %s", tc.doc, got, tc.kept)
		}
	}
}

// docAt returns the value at path in the snapshot's document.
func docAt(t *testing.T, snap *Snapshot, path []string) any {
	t.Helper()
	var v any = snap.doc
	for _, k := range path {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case []any:
			i, _ := strconv.Atoi(k)
			v = c[i]
		default:
			t.Fatalf("no object at %v in %s", path, snap.Document())
		}
	}
	return v
}

// TestIntegersRefused: fractions, out-of-range values and huge exponents
// are refused with the path and the range, however they are written.
func TestIntegersRefused(t *testing.T) {
	for _, tc := range []struct{ doc, err string }{
		{`{"players":{"3":{"score":1.5}}}`, "players.3.score: want an integer from -2147483648 to 2147483647, got 1.5"},
		{`{"players":{"3":{"score":2147483648.0}}}`, "players.3.score: want an integer from -2147483648 to 2147483647, got 2147483648.0"},
		{`{"players":{"3":{"score":1e19}}}`, "players.3.score: want an integer from -2147483648 to 2147483647, got 1e19"},
		{`{"players":{"3":{"score":-1e400}}}`, "players.3.score: want an integer from -2147483648 to 2147483647, got -1e400"},
		{`{"players":{"3":{"score":1e-400}}}`, "players.3.score: want an integer from -2147483648 to 2147483647, got 1e-400"},
		{`{"players":{"3":{"score":"1"}}}`, "players.3.score: want an integer, got a string"},
		{`{"max_players":1e400}`, "max_players: want an integer from 0 to 65535, got 1e400"},
		{`{"max_players":-1.0}`, "max_players: want an integer from 0 to 65535, got -1.0"},
		{`{"max_players":3.5}`, "max_players: want an integer from 0 to 65535, got 3.5"},
		{`{"max_players":` + strings.Repeat("9", 100) + `}`, "max_players: want an integer from 0 to 65535, got " + strings.Repeat("9", 40) + "…"},
		{`{"protocol":2147483648e0}`, "protocol: want an integer from 0 to 2147483647, got 2147483648e0"},
		{`{"game_port":65536.0}`, "game_port: want an integer from 0 to 65535, got 65536.0"},
		{`{"sourcetv":{"port":0.0}}`, "sourcetv.port: want an integer from 1 to 65535, got 0.0"},
		{`{"steam_id":-1.0}`, "steam_id: want a SteamID64 (an unsigned 64-bit integer), got -1.0"},
		{`{"steam_id":1e20}`, "steam_id: want a SteamID64 (an unsigned 64-bit integer), got 1e20"},
		{`{"steam_id":1.5}`, "steam_id: want a SteamID64 (an unsigned 64-bit integer), got 1.5"},
		{`{"players":{"3":{"ping":65536.0}}}`, "players.3.ping: want an integer from 0 to 65535, got 65536.0 (or a negative one: unknown)"},
		{`{"players":{"3":{"ping":1.5}}}`, "players.3.ping: want an integer from 0 to 65535, got 1.5 (or a negative one: unknown)"},
		{`{"players":{"3":{"ping":-1.5}}}`, "players.3.ping: want an integer from 0 to 65535, got -1.5 (or a negative one: unknown)"},
		{`{"players":{"3":{"ping":"-1"}}}`, "players.3.ping: want an integer, got a string (or a negative one: unknown)"},
	} {
		assertRefused(t, tc.doc, tc.err)
	}
}

// assertRefused checks that doc is refused with err, by Validate and by a
// Store's replace and patch, which change nothing.
func assertRefused(t *testing.T, d, want string) {
	t.Helper()
	if err := Validate(doc(t, d)); err == nil || err.Error() != want {
		t.Errorf("%.80s:\n got  %v\n want %s", d, err, want)
	}
	s, _ := newStore(t, `{"name":"base","players":{"1":{"name":"a"}}}`)
	before := s.Snapshot()
	if r, err := s.Put(doc(t, d)); err == nil || !reflect.DeepEqual(r, Result{}) {
		t.Errorf("%.80s: replace accepted (%+v)", d, r)
	}
	if r, err := s.Merge(doc(t, d)); err == nil || !reflect.DeepEqual(r, Result{}) {
		t.Errorf("%.80s: patch accepted (%+v)", d, r)
	}
	if s.Snapshot() != before {
		t.Errorf("%.80s: a refused change changed the snapshot", d)
	}
}

// TestNegativePingIsUnknown: any negative integer ping is accepted as
// PingUnknown, and the document keeps -1.
func TestNegativePingIsUnknown(t *testing.T) {
	for _, ping := range []string{"-1", "-5", "-1.0", "-2147483649", "-1e400", "-" + strings.Repeat("9", 30)} {
		s, _ := newStore(t, `{}`)
		r, err := s.Put(doc(t, `{"players":{"3":{"name":"bot","ping":`+ping+`,"bot":true}}}`))
		if err != nil || len(r.Warnings) != 0 {
			t.Errorf("ping %s: %v %v", ping, err, r.Warnings)
			continue
		}
		snap := s.Snapshot()
		if snap.Players[0].Ping != PingUnknown {
			t.Errorf("ping %s: stored %d, want PingUnknown", ping, snap.Players[0].Ping)
		}
		if got := docAt(t, snap, []string{"players", "3", "ping"}); got != json.Number("-1") {
			t.Errorf("ping %s: document keeps %#v, want -1", ping, got)
		}
	}
	s, _ := newStore(t, `{"players":{"3":{"ping":0}}}`)
	if p := s.Snapshot().Players[0].Ping; p != 0 {
		t.Fatalf("ping 0 stored as %d", p)
	}
}

// TestTextCut: every text field shown to people is cut to its limit on a
// character boundary, with a warning naming it; the document keeps the
// cut text.
func TestTextCut(t *testing.T) {
	for _, tc := range []struct {
		field string // a document with the text at path
		path  []string
		max   int
	}{
		{`{"name":%s}`, []string{"name"}, MaxNameLen},
		{`{"map":%s}`, []string{"map"}, MaxShortLen},
		{`{"game":%s}`, []string{"game"}, MaxShortLen},
		{`{"version":%s}`, []string{"version"}, MaxShortLen},
		{`{"keywords":%s}`, []string{"keywords"}, MaxShortLen},
		{`{"gamemode":%s}`, []string{"gamemode"}, MaxShortLen},
		{`{"language":%s}`, []string{"language"}, MaxLanguageLen},
		{`{"description":%s}`, []string{"description"}, MaxDescription},
		{`{"sourcetv":{"port":1,"name":%s}}`, []string{"sourcetv", "name"}, MaxShortLen},
		{`{"players":{"3":{"name":%s}}}`, []string{"players", "3", "name"}, MaxPlayerName},
		{`{"rules":{"motd":%s}}`, []string{"rules", "motd"}, MaxRuleValueLen},
		{`{"values":{"event":%s}}`, []string{"values", "event"}, MaxValueLen},
		{`{"tags":["a",%s]}`, []string{"tags", "1"}, MaxTagLen},
	} {
		for _, unit := range []string{"x", "é", "😀"} { // 1, 2 and 4 bytes
			text := strings.Repeat(unit, tc.max+6)
			b, _ := json.Marshal(text)
			d := fmt.Sprintf(tc.field, b)
			s, _ := newStore(t, `{}`)
			r, err := s.Put(doc(t, d))
			if err != nil {
				t.Errorf("%.40s: %v", d, err)
				continue
			}
			path := strings.Join(tc.path, ".")
			want := []Warning{{Path: path, Reason: fmt.Sprintf("cut to %d characters (was %d)", tc.max, tc.max+6)}}
			if !reflect.DeepEqual(r.Warnings, want) {
				t.Errorf("%s (%s): warnings %v, want %v", path, unit, r.Warnings, want)
			}
			kept, _ := docAt(t, s.Snapshot(), tc.path).(string)
			if kept != strings.Repeat(unit, tc.max) || !utf8.ValidString(kept) {
				t.Errorf("%s (%s): document keeps %d characters %q…", path, unit, utf8.RuneCountInString(kept), kept[:min(len(kept), 8)])
			}
			if r2, _ := s.Put(doc(t, d)); len(r2.Warnings) != 1 {
				t.Errorf("%s: the same replace again warns %v", path, r2.Warnings)
			}
			if r3, _ := s.Merge(doc(t, `{"password":true}`)); len(r3.Warnings) != 0 {
				t.Errorf("%s: a later patch of another field warns %v", path, r3.Warnings)
			}
			if err := Validate(doc(t, strings.Replace(d, string(b), `"`+strings.Repeat(unit, tc.max)+`"`, 1))); err != nil {
				t.Errorf("%s: text at the limit refused: %v", path, err)
			}
		}
	}
	snap := func(d string) *Snapshot {
		s, _ := newStore(t, d)
		return s.Snapshot()
	}
	long := strings.Repeat("n", 300)
	got := snap(`{"name":"` + long + `","map":"` + long + `","players":{"1":{"name":"` + long + `"}},"rules":{"r":"` + long + `"},"tags":["` + long + `"]}`)
	if len(got.Name) != MaxNameLen || len(got.Map) != MaxShortLen || len(got.Players[0].Name) != MaxPlayerName ||
		len(got.Rules[0].Value) != MaxRuleValueLen || len(got.Tags[0]) != MaxTagLen {
		t.Errorf("snapshot fields not cut: %d %d %d %d %d", len(got.Name), len(got.Map), len(got.Players[0].Name), len(got.Rules[0].Value), len(got.Tags[0]))
	}
}

// TestStillRefused: names that identify something, counts, NUL characters,
// invalid UTF-8 and wrong types are refused, not cut, with the path.
func TestStillRefused(t *testing.T) {
	long := func(n int) string { return strings.Repeat("k", n) }
	many := func(field string, n int, entry func(i int) string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(entry(i))
		}
		return fmt.Sprintf(field, b.String())
	}
	for _, tc := range []struct{ doc, err string }{
		{`{"folder":"` + long(129) + `"}`, "folder: too long: 129 characters, at most 128"},
		{`{"rules":{"` + long(129) + `":"v"}}`, "rules." + long(129) + ": key too long: 129 characters, at most 128"},
		{`{"values":{"` + long(65) + `":"v"}}`, "values." + long(65) + ": key too long: 65 characters, at most 64"},
		{`{"links":{"` + long(33) + `":"https://x.org"}}`, "links." + long(33) + ": key too long: 33 characters, at most 32"},
		{`{"links":{"web":"https://x.org/` + long(500) + `"}}`, "links.web: too long: 514 characters, at most 512"},
		{`{"branding":{"logo":"` + long(4097) + `"}}`, "branding.logo: too long: 4097 characters, at most 4096"},
		{`{"branding":{"primary":"#aabbccd"}}`, "branding.primary: too long: 8 characters, at most 7"},
		{`{"players":{"4294967296":{}}}`, "players.4294967296: player ids are decimal integers from 0 to 4294967295 without leading zeros"},
		{many(`{"players":{%s}}`, MaxPlayers+1, func(i int) string { return fmt.Sprintf(`"%d":{}`, i) }), "players: too many entries: 4097, at most 4096"},
		{many(`{"rules":{%s}}`, MaxRules+1, func(i int) string { return fmt.Sprintf(`"r%d":1`, i) }), "rules: too many entries: 1025, at most 1024"},
		{many(`{"values":{%s}}`, MaxValues+1, func(i int) string { return fmt.Sprintf(`"v%d":1`, i) }), "values: too many entries: 65, at most 64"},
		{many(`{"tags":[%s]}`, MaxTags+1, func(i int) string { return `"t"` }), "tags: too many tags: 33, at most 32"},
		{many(`{"links":{%s}}`, MaxLinks+1, func(i int) string { return fmt.Sprintf(`"l%d":"https://x.org"`, i) }), "links: too many entries: 17, at most 16"},
		{`{"name":"a\u0000` + long(300) + `"}`, "name: contains a NUL character"},
		{`{"players":{"3":{"name":"a\u0000b"}}}`, "players.3.name: contains a NUL character"},
		{`{"rules":{"a\u0000":"v"}}`, "rules.a\x00: key contains a NUL character"},
		{`{"tags":["` + long(70) + `\u0000"]}`, "tags.0: contains a NUL character"},
		{`{"players":{"3":{"name":7}}}`, "players.3.name: want a string, got a number"},
		{`{"name":"` + long(300) + `","map":7}`, "map: want a string, got a number"},
		{`{"players":{"3":{"name":"` + long(70) + `","score":1.5}}}`, "players.3.score: want an integer from -2147483648 to 2147483647, got 1.5"},
	} {
		assertRefused(t, tc.doc, tc.err)
	}
	// Invalid UTF-8 cannot come through JSON (the decoder replaces it; the
	// feed refuses the line) but can from Go callers.
	for _, d := range []map[string]any{
		{"name": "a\xffb"},
		{"players": map[string]any{"3": map[string]any{"name": strings.Repeat("x", 70) + "\xff"}}},
		{"rules": map[string]any{"k\xff": "v"}},
	} {
		if err := Validate(d); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("%q: %v, want not valid UTF-8", d, err)
		}
	}
}

// TestUnknownFieldNamesNearest: an unknown field names the nearest known
// one (internal/nearest), else lists them, at every level that has fixed
// fields.
func TestUnknownFieldNamesNearest(t *testing.T) {
	for _, tc := range []struct{ doc, err string }{
		{`{"mapp":"x"}`, "mapp: unknown field (did you mean map?)"},
		{`{"max_player":3}`, "max_player: unknown field (did you mean max_players?)"},
		{`{"zzzzzz":1}`, "zzzzzz: unknown field"},
		{`{"players":{"3":{"nmae":"x"}}}`, "players.3.nmae: unknown field (did you mean name?)"},
		{`{"players":{"3":{"scores":1}}}`, "players.3.scores: unknown field (did you mean score?)"},
		{`{"players":{"3":{"team":"red"}}}`, "players.3.team: unknown field (want name, score, ping, bot, time)"},
		{`{"players":{"3":{"bot":"x","zzz":1}}}`, "players.3.bot: want true or false, got a string"},
		{`{"sourcetv":{"port":1,"nam":"tv"}}`, "sourcetv.nam: unknown field (did you mean name?)"},
		{`{"sourcetv":{"port":1,"x":"tv"}}`, "sourcetv.x: unknown field (want name, port)"},
		{`{"branding":{"primery":"#aabbcc"}}`, "branding.primery: unknown field (did you mean primary?)"},
		{`{"branding":{"showname":true}}`, "branding.showname: unknown field (did you mean show_name?)"},
		{`{"branding":{"colour":"#aabbcc"}}`, "branding.colour: unknown field (want logo, primary, secondary, show_name)"},
	} {
		assertRefused(t, tc.doc, tc.err)
	}
}

// TestWarningsOnlyForTheChange: the warnings of a change are about what it
// sent; a refused change gives none and changes nothing (its cut text
// included).
func TestWarningsOnlyForTheChange(t *testing.T) {
	long := strings.Repeat("p", 70)
	s, _ := newStore(t, `{"name":"base"}`)
	r, err := s.Merge(doc(t, `{"players":{"1":{"name":"`+long+`"},"2":{"name":"ok"}}}`))
	if err != nil || len(r.Warnings) != 1 || r.Warnings[0].Path != "players.1.name" {
		t.Fatalf("%+v %v", r, err)
	}
	r, err = s.Merge(doc(t, `{"players":{"2":{"name":"`+long+`"}}}`))
	if err != nil || len(r.Warnings) != 1 || r.Warnings[0].Path != "players.2.name" {
		t.Fatalf("second patch: %+v %v (only the player it sent)", r, err)
	}
	before := s.Snapshot()
	if r, err := s.Merge(doc(t, `{"name":"`+strings.Repeat("n", 300)+`","max_players":1.5}`)); err == nil || r.Warnings != nil {
		t.Fatalf("a refused patch: %+v %v", r, err)
	}
	if s.Snapshot() != before || s.Snapshot().Name != "base" {
		t.Fatal("a refused patch changed the state")
	}
	var got map[string]any
	json.Unmarshal(s.Snapshot().Document(), &got)
	if n := got["players"].(map[string]any)["1"].(map[string]any)["name"]; n != long[:MaxPlayerName] {
		t.Fatalf("get shows %v, want the cut name", n)
	}
}

// TestWarningsSorted: warnings come in path order whatever the map order.
func TestWarningsSorted(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"name":"` + strings.Repeat("n", 300) + `","players":{`)
	for i := 0; i < 40; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"%d":{"name":"%s","score":%d.0}`, i, strings.Repeat("p", 65), i)
	}
	b.WriteString(`}}`)
	var first []Warning
	for range 5 {
		s, _ := newStore(t, `{}`)
		r, err := s.Put(doc(t, b.String()))
		if err != nil || len(r.Warnings) != 41 {
			t.Fatalf("%d warnings, %v", len(r.Warnings), err)
		}
		if first == nil {
			first = r.Warnings
		} else if !reflect.DeepEqual(first, r.Warnings) {
			t.Fatal("warnings in a different order")
		}
		if s.Snapshot().Players[7].Score != 7 {
			t.Fatal("integral float score not kept")
		}
	}
	if first[0].Path != "name" || first[1].Path != "players.0.name" {
		t.Fatalf("order: %v", first[:2])
	}
	_, ws := Check(doc(t, b.String()))
	if !reflect.DeepEqual(ws, first) {
		t.Fatal("Check gives other warnings than the Store")
	}
	lines := WarningLines("state.", first)
	if len(lines) != MaxWarningLines+1 || lines[0] != "state.name: cut to 256 characters (was 300)" ||
		lines[MaxWarningLines] != "… and 25 more values cut the same way" {
		t.Fatalf("%q", lines)
	}
	if WarningLines("state.", nil) != nil {
		t.Fatal("no warnings: nil lines (omitted from the reply)")
	}
}

// TestBaseAndUpstreamFitted: [server] and the upstream's answer are fitted
// like the feed's document; Check warns about [server] and errs only on
// what the Store refuses.
func TestBaseAndUpstreamFitted(t *testing.T) {
	base := doc(t, `{"name":"`+strings.Repeat("b", 300)+`","max_players":8.0}`)
	s, err := NewStore(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap := s.Snapshot(); len(snap.Name) != MaxNameLen || snap.MaxPlayers != 8 {
		t.Fatalf("%d %d", len(snap.Name), snap.MaxPlayers)
	}
	if len(base["name"].(string)) != 300 {
		t.Fatal("NewStore changed its caller's map")
	}
	if r, _ := s.Merge(doc(t, `{"map":"m"}`)); r.Warnings != nil {
		t.Fatalf("a patch warns about [server]: %v", r.Warnings)
	}
	if _, err := s.SetGameServer(doc(t, `{"map":"`+strings.Repeat("u", 200)+`"}`)); err != nil {
		t.Fatal(err)
	}
	errs, ws := Check(doc(t, `{"name":"`+strings.Repeat("b", 300)+`","max_players":1.5}`))
	if len(errs) != 1 || len(ws) != 1 || ws[0].Path != "name" {
		t.Fatalf("%v %v", errs, ws)
	}
	var fe *FieldError
	if !errors.As(errs[0], &fe) || fe.Path != "max_players" {
		t.Fatal(errs[0])
	}
}

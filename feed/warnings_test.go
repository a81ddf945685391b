package feed

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/queryd/queryd/state"
)

// realFeeder is what a Python feeder sends: floats for integers
// (json.dumps(3.0)), a bot's ping of -1 and a name over 64 characters.
var realFeeder = `{"name":"Py","max_players":32.0,"players":{"3":{"name":"` + strings.Repeat("é", 70) +
	`","score":3e0,"ping":-1,"bot":true},"4":{"name":"Ann","score":1.0,"ping":48.0}}}`

// wantWarnings is the reply's warnings for realFeeder.
var wantWarnings = []string{"state.players.3.name: cut to 64 characters (was 70)"}

// checkFed checks the store after realFeeder was accepted.
func checkFed(t *testing.T, store *state.Store) {
	t.Helper()
	snap := store.Snapshot()
	if snap.MaxPlayers != 32 || len(snap.Players) != 2 {
		t.Fatalf("max_players %d, %d players", snap.MaxPlayers, len(snap.Players))
	}
	p, ann := snap.Players[0], snap.Players[1]
	if p.Name != strings.Repeat("é", 64) || p.Score != 3 || p.Ping != state.PingUnknown || ann.Ping != 48 || ann.Score != 1 {
		t.Fatalf("players %+v", snap.Players)
	}
}

// TestReplyWarningsSocket: over the socket, an accepted replace with values
// real feeders send carries the warnings of what was cut; a later patch
// carries none (no "warnings" member); a refused message carries none and
// changes nothing; get returns the document as queryd serves it.
func TestReplyWarningsSocket(t *testing.T) {
	s, store := start(t, Config{})
	c := dialRaw(t, s.Path())
	line := rawLine(t, c, `{"op":"replace","state":`+realFeeder+`}`)
	var rep Reply
	json.Unmarshal(line, &rep)
	if !rep.OK || !reflect.DeepEqual(rep.Warnings, wantWarnings) {
		t.Fatalf("replace: %s", line)
	}
	checkFed(t, store)
	if s.LastFed().IsZero() {
		t.Fatal("a replace with warnings is activity")
	}
	if line := rawLine(t, c, `{"op":"patch","state":{"map":"m"}}`); strings.Contains(string(line), "warnings") {
		t.Fatalf("a patch of another field: %s", line)
	}
	before := store.Snapshot()
	rep = c.roundTrip(t, `{"op":"patch","state":{"name":"`+strings.Repeat("n", 300)+`","players":{"4":{"score":1.5}}}}`)
	if rep.OK || rep.Warnings != nil || rep.Error != "state.players.4.score: want an integer from -2147483648 to 2147483647, got 1.5" {
		t.Fatalf("refused patch: %+v", rep)
	}
	if store.Snapshot() != before {
		t.Fatal("a refused patch changed the state")
	}
	rep = c.roundTrip(t, `{"op":"patch","state":{"mapp":"x"}}`)
	if rep.OK || rep.Error != "state.mapp: unknown field (did you mean map?)" {
		t.Fatalf("unknown field: %+v", rep)
	}
	rep = c.roundTrip(t, `{"op":"get"}`)
	var doc struct {
		MaxPlayers json.RawMessage `json:"max_players"`
		Players    map[string]struct {
			Name  string
			Score json.RawMessage
			Ping  json.RawMessage
		}
	}
	if err := json.Unmarshal(rep.State, &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Players["3"]
	if string(doc.MaxPlayers) != "32" || p.Name != strings.Repeat("é", 64) || string(p.Score) != "3" || string(p.Ping) != "-1" ||
		string(doc.Players["4"].Ping) != "48" {
		t.Fatalf("get: %s", rep.State)
	}
}

// rawLine sends line and returns the reply line as sent.
func rawLine(t *testing.T, c *conn, line string) []byte {
	t.Helper()
	if _, err := c.c.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
	b, err := c.r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReplyWarningsHTTP: the HTTP feed's JSON answers carry the same
// warnings: 200 with "warnings" for PUT and PATCH, 400 without for a
// refused document.
func TestReplyWarningsHTTP(t *testing.T) {
	_, _, store, base := startHTTP(t, Config{}, HTTPConfig{})
	a := do(t, "PUT", base+"/v1/state", testToken, "application/json", realFeeder)
	if a.code != 200 || !a.rep.OK || !reflect.DeepEqual(a.rep.Warnings, wantWarnings) {
		t.Fatalf("PUT: %+v", a)
	}
	checkFed(t, store)
	a = do(t, "PATCH", base+"/v1/state", testToken, "application/merge-patch+json", `{"map":"`+strings.Repeat("m", 129)+`"}`)
	if a.code != 200 || !reflect.DeepEqual(a.rep.Warnings, []string{"state.map: cut to 128 characters (was 129)"}) {
		t.Fatalf("PATCH: %+v", a)
	}
	v := store.Snapshot().Version
	a = do(t, "PATCH", base+"/v1/state", testToken, "application/json", `{"name":"`+strings.Repeat("n", 300)+`","max_players":3.5}`)
	if a.code != 400 || a.rep.OK || a.rep.Warnings != nil || a.rep.Error != "state.max_players: want an integer from 0 to 65535, got 3.5" {
		t.Fatalf("refused PATCH: %+v", a)
	}
	if store.Snapshot().Version != v {
		t.Fatal("a refused PATCH changed the state")
	}
}

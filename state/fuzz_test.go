package state

import (
	"reflect"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzFeedDocument feeds arbitrary bytes as a patch and as a replace: the
// store must never panic, a rejected change must leave the snapshot as it
// was and give no warnings, and an accepted one must be in its final form:
// its document, sent again, is accepted without warnings or fixes, and its
// text fits the limits.
func FuzzFeedDocument(f *testing.F) {
	for _, seed := range []string{
		`{"name":"x","players":{"1":{"name":"a","score":1,"ping":2,"time":3.5,"bot":true}}}`,
		`{"players":{"1":null}}`,
		`{"rules":{"a":"b","c":1,"d":true},"values":{"v":null}}`,
		`{"links":{"w":"https://example.com"},"tags":["a"],"branding":{"primary":"#aabbcc"}}`,
		`{"sourcetv":{"port":1,"name":"tv"},"steam_id":"1"}`,
		`[]`, `null`, `{"name":{}}`,
		`{"max_players":3.0,"protocol":3e0,"game_port":-0.0,"steam_id":7.6561198e16}`,
		`{"players":{"3":{"score":1e400,"ping":-1e400}}}`,
		`{"players":{"3":{"score":-2147483648.0,"ping":-1,"name":"ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé"}}}`,
		`{"sourcetv":{"port":27020.0,"nam":"x"},"mapp":"m","tags":["😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀"]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := NewStore(map[string]any{"name": "base"}, func() time.Time { return time.Unix(0, 0) })
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeJSON(data)
		if err != nil {
			return
		}
		before := s.Snapshot()
		if r, err := s.Merge(m); err != nil && (s.Snapshot() != before || r.Warnings != nil) {
			t.Fatal("rejected patch changed the snapshot or warned")
		} else if err == nil {
			checkFinal(t, s)
		}
		before = s.Snapshot()
		if r, err := s.Put(m); err != nil && (s.Snapshot() != before || r.Warnings != nil) {
			t.Fatal("rejected replace changed the snapshot or warned")
		} else if err == nil {
			checkFinal(t, s)
		}
		_ = s.Snapshot().Document()
	})
}

// checkFinal checks that the current document is in its final form.
func checkFinal(t *testing.T, s *Store) {
	snap := s.Snapshot()
	doc, err := DecodeJSON(snap.Document())
	if err != nil {
		t.Fatal(err)
	}
	again := &Snapshot{}
	fixes, err := decodeDocument(doc, again)
	if err != nil || len(fixes) != 0 {
		t.Fatalf("the document of an accepted change gives %v, fixes %v", err, fixes)
	}
	again.Version, again.Made, again.doc = snap.Version, snap.Made, snap.doc
	for i := range again.Players {
		again.Players[i].Since = snap.Players[i].Since
	}
	if len(again.Players) == len(snap.Players) {
		again.Players = snap.Players // order is the Store's
	}
	if !reflect.DeepEqual(again, snap) {
		t.Fatalf("the document decodes to another snapshot:\n%+v\n%+v", again, snap)
	}
	for _, p := range snap.Players {
		if utf8.RuneCountInString(p.Name) > MaxPlayerName || !utf8.ValidString(p.Name) {
			t.Fatalf("player name %q", p.Name)
		}
	}
	if utf8.RuneCountInString(snap.Name) > MaxNameLen || utf8.RuneCountInString(snap.Description) > MaxDescription {
		t.Fatal("text over its limit")
	}
}

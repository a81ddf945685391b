package state

import (
	"testing"
	"time"
)

// FuzzFeedDocument feeds arbitrary bytes as a patch and as a replace: the
// store must never panic, and a rejected change must leave the snapshot as
// it was.
func FuzzFeedDocument(f *testing.F) {
	for _, seed := range []string{
		`{"name":"x","players":{"1":{"name":"a","score":1,"ping":2,"time":3.5,"bot":true}}}`,
		`{"players":{"1":null}}`,
		`{"rules":{"a":"b","c":1,"d":true},"values":{"v":null}}`,
		`{"links":{"w":"https://example.com"},"tags":["a"],"branding":{"primary":"#aabbcc"}}`,
		`{"sourcetv":{"port":1,"name":"tv"},"steam_id":"1"}`,
		`[]`, `null`, `{"name":{}}`,
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
		if _, err := s.Patch(m); err != nil && s.Snapshot() != before {
			t.Fatal("rejected patch changed the snapshot")
		}
		before = s.Snapshot()
		if _, err := s.Replace(m); err != nil && s.Snapshot() != before {
			t.Fatal("rejected replace changed the snapshot")
		}
		_ = s.Snapshot().Document()
	})
}

// Package polltest holds what the protocol modules' tests of their
// polling capability (module.Poller) share.
package polltest

import (
	"testing"

	"github.com/queryd/queryd/state"
)

// Valid fails t unless doc is a valid state document, as the poller
// publishes it (state.Store.SetGameServer), and returns its snapshot.
func Valid(t testing.TB, doc map[string]any) *state.Snapshot {
	t.Helper()
	s, err := state.NewStore(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetGameServer(doc); err != nil {
		t.Fatalf("not a valid state document: %v\n%v", err, doc)
	}
	return s.Snapshot()
}

// Rules returns a snapshot's rules as a map.
func Rules(s *state.Snapshot) map[string]string {
	out := map[string]string{}
	for _, r := range s.Rules {
		out[r.Key] = r.Value
	}
	return out
}

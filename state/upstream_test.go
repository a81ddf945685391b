package state

import (
	"reflect"
	"testing"
)

// The upstream's answer sits between [server] and the feed: its fields hide
// the base's, the feed's fields hide its own, and a field it leaves out
// falls back to the base.
func TestUpstreamLayerPrecedence(t *testing.T) {
	s, _ := newStore(t, `{"name":"base","map":"m0","game":"g0","max_players":8}`)
	v, err := s.SetGameServer(doc(t, `{"name":"up","map":"m1","players":{"0":{"name":"a"},"1":{"name":"b"}}}`))
	if err != nil || v != 2 {
		t.Fatal(v, err)
	}
	snap := s.Snapshot()
	if snap.Name != "up" || snap.Map != "m1" || snap.Game != "g0" || snap.MaxPlayers != 8 {
		t.Fatalf("upstream over base: %+v", snap)
	}
	if got := names(snap); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("upstream players %v", got)
	}

	// A feed patch sits on top; the fields it does not touch stay the upstream's.
	if _, err := s.Patch(doc(t, `{"name":"fed","values":{"k":1}}`)); err != nil {
		t.Fatal(err)
	}
	// The next upstream answer changes what the feed has not set.
	if _, err := s.SetGameServer(doc(t, `{"name":"up2","map":"m2","players":{"1":{"name":"b"},"2":{"name":"c"}}}`)); err != nil {
		t.Fatal(err)
	}
	snap = s.Snapshot()
	if snap.Name != "fed" || snap.Map != "m2" || len(snap.Values) != 1 {
		t.Fatalf("feed over upstream: %+v", snap)
	}
	if got := names(snap); !reflect.DeepEqual(got, []string{"b", "c"}) {
		t.Fatalf("players follow the upstream: %v", got)
	}

	// Removing a feed field falls back to the upstream's, then the base's.
	if _, err := s.Patch(doc(t, `{"name":null}`)); err != nil {
		t.Fatal(err)
	}
	if n := s.Snapshot().Name; n != "up2" {
		t.Fatalf("name after the feed removed it: %q, want the upstream's", n)
	}
	if _, err := s.SetGameServer(doc(t, `{"map":"m3"}`)); err != nil {
		t.Fatal(err)
	}
	snap = s.Snapshot()
	if snap.Name != "base" || snap.Map != "m3" || len(snap.Players) != 0 {
		t.Fatalf("an upstream answer without name or players: %+v", snap)
	}

	// A reload's new base keeps the upstream's fields.
	if err := s.SetBase(doc(t, `{"name":"base2","map":"b2","game":"g2"}`)); err != nil {
		t.Fatal(err)
	}
	if snap = s.Snapshot(); snap.Name != "base2" || snap.Map != "m3" || snap.Game != "g2" {
		t.Fatalf("after SetBase: %+v", snap)
	}
}

// A feed replace is the whole feed layer: its players (none when absent)
// hide the upstream's; a field it leaves out is the upstream's.
func TestUpstreamUnderFeedReplace(t *testing.T) {
	s, _ := newStore(t, `{"name":"base"}`)
	s.SetGameServer(doc(t, `{"name":"up","map":"m1","players":{"0":{"name":"a"}}}`))
	if _, err := s.Replace(doc(t, `{"name":"fed"}`)); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if snap.Name != "fed" || snap.Map != "m1" || len(snap.Players) != 0 {
		t.Fatalf("%+v", snap)
	}
}

// A rejected upstream document changes nothing: no snapshot, no subscriber
// call, the last good answer's fields stay.
func TestUpstreamRejectedChangesNothing(t *testing.T) {
	s, _ := newStore(t, `{"name":"base"}`)
	if _, err := s.SetGameServer(doc(t, `{"name":"up","players":{"3":{"name":"a","time":5}}}`)); err != nil {
		t.Fatal(err)
	}
	before := s.Snapshot()
	called := 0
	s.Subscribe(func(*Snapshot) { called++ })
	for _, bad := range []string{
		`{"name":7}`,
		`{"players":{"01":{"name":"x"}}}`,
		`{"max_players":70000}`,
		`{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{}}}}}}}}}`,
	} {
		if _, err := s.SetGameServer(doc(t, bad)); err == nil {
			t.Errorf("upstream %s accepted", bad)
		}
	}
	if s.Snapshot() != before || called != 1 {
		t.Fatal("a rejected upstream document must publish nothing")
	}
}

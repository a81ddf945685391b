package feed

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClientRecovers: a rejected patch never reaches the Client's accepted
// document; a feed server started again on the same socket (queryd
// restarted) gets, on the next call, the accepted document and the call's
// patch, not the rejected value; changes made while nothing listens are
// kept (ErrNotSent) and a rejected one among them is reported to
// OnRejected, the others arriving.
func TestClientRecovers(t *testing.T) {
	path := filepath.Join(shortDir(t), "feed.sock")
	cl := NewClient(path)
	defer cl.Close()
	var rejected []string
	cl.OnRejected = func(r *Rejection) { rejected = append(rejected, r.Op+" "+string(r.Change)) }

	// Before anything listens: kept.
	if _, err := cl.Replace(map[string]any{"name": "good", "players": map[string]any{"1": map[string]any{"name": "a", "score": 3}}}); !errors.Is(err, ErrNotSent) {
		t.Fatalf("replace with nothing listening: %v, want ErrNotSent", err)
	}
	if _, err := cl.Patch(map[string]any{"players": map[string]any{"1": map[string]any{"score": 1.5}}}); !errors.Is(err, ErrNotSent) {
		t.Fatalf("patch with nothing listening: %v, want ErrNotSent", err)
	}
	s, _ := start(t, Config{Socket: path})
	time.Sleep(150 * time.Millisecond) // past the first backoff
	if _, err := cl.Patch(map[string]any{"map": "later"}); err != nil {
		t.Fatalf("patch once the server listens: %v", err)
	}
	if len(rejected) != 1 || !strings.Contains(rejected[0], "1.5") {
		t.Fatalf("OnRejected got %q, want the kept score 1.5 patch", rejected)
	}
	want := `{"map":"later","name":"good","players":{"1":{"name":"a","score":3}}}`
	if got := string(cl.Accepted()); got != want {
		t.Fatalf("accepted %s, want %s", got, want)
	}

	// A rejected patch on a live connection: returned, not kept.
	var re *ReplyError
	if _, err := cl.Patch(map[string]any{"players": map[string]any{"1": map[string]any{"score": 2.5}}}); !errors.As(err, &re) {
		t.Fatalf("patch with score 2.5: %v, want a *ReplyError", err)
	}
	if got := string(cl.Accepted()); got != want {
		t.Fatalf("after a rejected patch, accepted %s, want %s", got, want)
	}

	// queryd restarted: the next call sends the accepted document first.
	s.Close()
	start(t, Config{Socket: path})
	if _, err := cl.Patch(map[string]any{"players": map[string]any{"2": map[string]any{"name": "b"}}}); err != nil {
		t.Fatalf("patch after the server restarted: %v", err)
	}
	fresh := dialRaw(t, path) // the new server's own view
	doc := fresh.roundTrip(t, `{"op":"get"}`).State
	for _, w := range []string{`"name":"good"`, `"map":"later"`, `"score":3`, `"name":"b"`} {
		if !strings.Contains(string(doc), w) {
			t.Errorf("after the restart the server has %s, missing %s", doc, w)
		}
	}
	if strings.Contains(string(doc), "1.5") || strings.Contains(string(doc), "2.5") {
		t.Errorf("after the restart the server has a rejected value: %s", doc)
	}
}

package agones

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// newIdle makes a watcher that is never served, for apply's tests;
// publish decides what the state takes.
func newIdle(t *testing.T, publish func(map[string]any) error) *Watcher {
	t.Helper()
	w, err := New(NewConfig(), Options{Publish: publish, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func mustParse(t *testing.T, line string) *gameServer {
	t.Helper()
	gs, err := parseWatchLine([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

// TestApplyRejected: a document the state refuses changes nothing: not
// the document, not the class, not the player ids, not LastRead.
func TestApplyRejected(t *testing.T) {
	refuse := false
	var published []map[string]any
	w := newIdle(t, func(doc map[string]any) error {
		if refuse {
			return errors.New("refused")
		}
		published = append(published, doc)
		return nil
	})
	w.apply(SourceWatch, mustParse(t, gsLine("Ready", "first")), 0)
	before, ids, read := w.Status(), w.ids, w.LastRead()
	refuse = true
	if w.apply(SourceWatch, mustParse(t, gsLine("Shutdown", "second")), 0) {
		t.Fatal("a refused document counts as applied")
	}
	after := w.Status()
	if after.State != "Ready" || after.Class != ClassAnswering || w.Doc()["name"] != "first" || !after.LastRead.Equal(read) ||
		len(published) != 1 || w.seq != 1 || !strings.Contains(after.LastError, "refused") {
		t.Errorf("half applied: before %+v after %+v doc %v seq %d", before, after, w.Doc(), w.seq)
	}
	if len(w.ids.byKey) != len(ids.byKey) {
		t.Errorf("player ids changed")
	}
	if n := testCounter(t, w, SourceWatch, ReasonRejected); n != 1 {
		t.Errorf("reads{watch,rejected} = %v", n)
	}
}

// TestApplySuperseded: a GET answer asked before a watch line was applied
// is not applied (it may be the older), but counts as a read.
func TestApplySuperseded(t *testing.T) {
	w := newIdle(t, func(map[string]any) error { return nil })
	seq := w.seq
	w.apply(SourceWatch, mustParse(t, gsLine("Allocated", "new")), 0)
	w.apply(SourceGet, mustParse(t, gsLine("Ready", "old")), seq)
	if s := w.Status(); s.State != "Allocated" || w.Doc()["name"] != "new" {
		t.Errorf("an older GET answer was applied over a newer watch line: %+v %v", s, w.Doc())
	}
	if n := testCounter(t, w, SourceGet, OutcomeSame); n != 1 {
		t.Errorf("reads{get,same} = %v", n)
	}
	w.apply(SourceGet, mustParse(t, gsLine("Ready", "newer")), w.seq)
	if w.Doc()["name"] != "newer" {
		t.Errorf("a GET answer asked after the last watch line was not applied")
	}
}

// TestApplySameState: a GameServer that maps to the same document and
// state publishes nothing and calls Changed no more.
func TestApplySameState(t *testing.T) {
	n := 0
	w := newIdle(t, func(map[string]any) error { n++; return nil })
	changed := 0
	w.changed = func() { changed++ }
	line := gsLine("Ready", "x")
	w.apply(SourceWatch, mustParse(t, line), 0)
	w.apply(SourceWatch, mustParse(t, line), 0)
	w.apply(SourceWatch, mustParse(t, gsLine("Allocated", "x")), 0)
	if n != 1 || changed != 2 {
		t.Errorf("published %d times (want 1), Changed called %d times (want 2: the first, the state)", n, changed)
	}
}

// TestStatusAllocs: Status and LastRead allocate nothing (the daemon asks
// them on its hot path).
func TestStatusAllocs(t *testing.T) {
	w := newIdle(t, func(map[string]any) error { return nil })
	w.apply(SourceWatch, mustParse(t, gsLine("Ready", "x")), 0)
	w.bad(SourceGet, errors.New("some error"))
	if n := testing.AllocsPerRun(100, func() { _ = w.Status(); _ = w.LastRead() }); n != 0 {
		t.Errorf("Status allocates %v times", n)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(NewConfig(), Options{}); err == nil {
		t.Error("no publish function: accepted")
	}
	c := NewConfig()
	c.SDK = "http://localhost:9358"
	if _, err := New(c, Options{Publish: func(map[string]any) error { return nil }}); err == nil {
		t.Error("an SDK address with a scheme: accepted")
	}
	reg := prometheus.NewRegistry()
	o := Options{Publish: func(map[string]any) error { return nil }, Registry: reg}
	if _, err := New(NewConfig(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := New(NewConfig(), o); err == nil {
		t.Error("two watchers on one registry: accepted (host mode must label each server's)")
	}
}

// testCounter reads queryd_agones_reads_total{source, outcome} of w.
func testCounter(t *testing.T, w *Watcher, source, outcome string) float64 {
	h := &harness{t: t, w: w}
	h.reg = prometheus.NewRegistry()
	if err := h.reg.Register(w.m.reads); err != nil {
		t.Fatal(err)
	}
	return h.reads(source, outcome)
}

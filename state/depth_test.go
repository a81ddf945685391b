package state

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// nested wraps inner in n objects {"a": ...} (or arrays when array).
func nested(n int, array bool, inner any) any {
	v := inner
	for range n {
		if array {
			v = []any{v}
		} else {
			v = map[string]any{"a": v}
		}
	}
	return v
}

func TestCheckDepth(t *testing.T) {
	cases := []struct {
		name string
		doc  any
		path string // "" : accepted
	}{
		{"the schema's own depth", map[string]any{"players": map[string]any{"1": map[string]any{"name": "x"}}}, ""},
		{"objects at MaxDepth", nested(MaxDepth, false, 1), ""},
		{"objects past MaxDepth", nested(MaxDepth+1, false, 1), strings.TrimSuffix(strings.Repeat("a.", MaxDepth), ".")},
		{"arrays past MaxDepth", map[string]any{"tags": nested(MaxDepth, true, "x")}, "tags" + strings.Repeat(".0", MaxDepth-1)},
		{"an empty container counts", map[string]any{"v": nested(MaxDepth-1, false, map[string]any{})}, "v" + strings.Repeat(".a", MaxDepth-1)},
		{"TOML arrays of tables", map[string]any{"x": []map[string]any{{"y": nested(MaxDepth, false, 1)}}}, "x.0.y" + strings.Repeat(".a", MaxDepth-3)},
		{"first path in key order", map[string]any{"z": nested(20, false, 1), "b": map[string]any{"ok": 1, "c": nested(20, true, 1)}}, "b.c" + strings.Repeat(".0", MaxDepth-2)},
		{"a million deep", nested(1_000_000, true, 1), strings.TrimSuffix(strings.Repeat("0.", MaxDepth), ".")},
	}
	for _, c := range cases {
		err := CheckDepth(c.doc)
		var fe *FieldError
		switch {
		case c.path == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.path != "" && (!errors.As(err, &fe) || fe.Path != c.path || !strings.Contains(fe.Reason, "nested deeper than 8 levels")):
			t.Errorf("%s: %v; want a FieldError at %q", c.name, err, c.path)
		}
	}
}

// TestNormalizeDeep: a [server] value nested a million deep (what a
// hostile TOML decodes to) is refused with its path; encoding/json used to
// overflow the stack on it.
func TestNormalizeDeep(t *testing.T) {
	for _, array := range []bool{true, false} {
		doc := map[string]any{"x": nested(1_000_000, array, 1)}
		start := time.Now()
		_, err := Normalize(doc)
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Path, "x.") {
			t.Fatalf("array %v: %v", array, err)
		}
		// Refused at depth 9 without walking the rest: milliseconds, even
		// under the race detector on a loaded machine.
		if took := time.Since(start); took > time.Second {
			t.Errorf("array %v: refused after %v", array, took)
		}
	}
}

// TestStoreRefusesDeep: every way into the Store refuses a document deeper
// than MaxDepth before merging it, and changes nothing.
func TestStoreRefusesDeep(t *testing.T) {
	s, _ := newStore(t, `{"name":"base"}`)
	deepLine := `{"values":` + strings.Repeat(`{"a":`, 9000) + `1` + strings.Repeat(`}`, 9000) + `}`
	deep := doc(t, deepLine)
	before := s.Snapshot()
	want := "values" + strings.Repeat(".a", MaxDepth-1) + ": nested deeper than 8 levels"
	if _, err := s.Patch(deep); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Patch: %v; want %q", err, want)
	}
	if _, err := s.Replace(deep); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Replace: %v", err)
	}
	if err := s.SetBase(deep); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("SetBase: %v", err)
	}
	if err := Validate(deep); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Validate: %v", err)
	}
	if _, err := NewStore(deep, nil); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("NewStore: %v", err)
	}
	if s.Snapshot() != before {
		t.Error("a refused document changed the snapshot")
	}
}

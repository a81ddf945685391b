package upstream

import (
	"reflect"
	"strconv"
	"testing"
)

// answerOf is a mapped answer whose players, keyed by place, have names.
func answerOf(names ...string) map[string]any {
	players := map[string]any{}
	for i, n := range names {
		players[strconv.Itoa(i)] = map[string]any{"name": n}
	}
	return map[string]any{"players": players}
}

// idsOf returns each player's id by name#occurrence.
func idsOf(doc map[string]any) map[string]string {
	out := map[string]string{}
	seen := map[string]int{}
	ids := make([]string, 0)
	for id := range doc["players"].(map[string]any) {
		ids = append(ids, id)
	}
	for _, id := range sortedNumeric(ids) {
		n := doc["players"].(map[string]any)[id].(map[string]any)["name"].(string)
		seen[n]++
		out[n+"#"+strconv.Itoa(seen[n])] = id
	}
	return out
}

func sortedNumeric(ids []string) []string {
	out := append([]string(nil), ids...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			a, _ := strconv.Atoi(out[i])
			b, _ := strconv.Atoi(out[j])
			if b < a {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// A player keeps its id while the answers list it, whatever its place; a
// new one gets the next number; players of the same name are told apart
// by their order; the ids of players gone are not given back to them.
func TestStableIDs(t *testing.T) {
	var d ids
	steps := []struct {
		names []string
		want  map[string]string
	}{
		{[]string{"A", "B", "A"}, map[string]string{"A#1": "0", "B#1": "1", "A#2": "2"}},
		{[]string{"B", "C", "A"}, map[string]string{"A#1": "0", "B#1": "1", "C#1": "3"}},
		{[]string{"A", "C", "A", "B"}, map[string]string{"A#1": "0", "B#1": "1", "C#1": "3", "A#2": "4"}},
		{nil, map[string]string{}},
		{[]string{"A"}, map[string]string{"A#1": "5"}},
	}
	for i, s := range steps {
		doc := answerOf(s.names...)
		d.rekey(doc)
		if got := idsOf(doc); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("answer %d %v: ids %v, want %v", i, s.names, got, s.want)
		}
	}
}

// The ids wrap around at 2^32 without reusing one in use.
func TestStableIDsWrap(t *testing.T) {
	d := ids{next: 1<<32 - 1}
	doc := answerOf("x", "y")
	d.rekey(doc)
	if got := idsOf(doc); !reflect.DeepEqual(got, map[string]string{"x#1": "4294967295", "y#1": "0"}) {
		t.Fatal(got)
	}
	d.next = 4294967295
	doc = answerOf("x", "y", "z")
	d.rekey(doc)
	if got := idsOf(doc); got["z#1"] != "1" {
		t.Fatalf("new id %v: 4294967295 and 0 are in use", got)
	}
}

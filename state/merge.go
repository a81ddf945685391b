package state

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MergePatch applies an RFC 7386 JSON merge patch to target and returns the
// result. Neither argument is modified: every object on the patched path is
// copied, so a rejected result leaves the original intact.
func MergePatch(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, _ := target.(map[string]any)
	out := make(map[string]any, len(tm)+len(pm))
	for k, v := range tm {
		out[k] = v
	}
	for k, v := range pm {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = MergePatch(out[k], v)
	}
	return out
}

// DecodeJSON decodes one JSON object the way the state expects it: numbers as
// json.Number, exactly one value, an object at the top.
func DecodeJSON(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON object")
	}
	if m == nil {
		return nil, fmt.Errorf("want a JSON object, got null")
	}
	return m, nil
}

// Normalize turns any Go value made of maps, slices, strings, numbers and
// bools (for example a decoded TOML table) into the generic JSON form the
// Store works on (map[string]any, []any, json.Number). A value nested
// deeper than MaxDepth is refused before it is encoded.
func Normalize(v any) (map[string]any, error) {
	if err := CheckDepth(v); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("state document: %w", err)
	}
	return DecodeJSON(b)
}

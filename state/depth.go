package state

import (
	"sort"
	"strconv"
)

// CheckDepth returns a *FieldError naming the first path (in key order) at
// which doc nests objects or arrays deeper than MaxDepth, doc itself counting
// one. It recurses at most MaxDepth+1 levels whatever doc holds. Besides the
// JSON forms (map[string]any, []any) it follows []map[string]any, which a
// decoded TOML array of tables is.
func CheckDepth(doc any) error {
	if !tooDeep(doc, 1) {
		return nil
	}
	return fieldErr(deepPath(doc, 1), "nested deeper than %d levels of objects and arrays (the document needs 3)", MaxDepth)
}

// tooDeep reports whether v, at depth d, is or holds an object or array
// deeper than MaxDepth. It looks no deeper than MaxDepth+1.
func tooDeep(v any, d int) bool {
	if !isContainer(v) {
		return false
	}
	if d > MaxDepth {
		return true
	}
	deep := false
	elements(v, false, func(_ string, e any) bool {
		deep = tooDeep(e, d+1)
		return !deep
	})
	return deep
}

// deepPath names the first container in key order that is deeper than
// MaxDepth, v being at depth d and too deep.
func deepPath(v any, d int) string {
	if d > MaxDepth {
		return "" // v itself
	}
	path := ""
	elements(v, true, func(k string, e any) bool {
		if !tooDeep(e, d+1) {
			return true
		}
		path = k
		if rest := deepPath(e, d+1); rest != "" {
			path += "." + rest
		}
		return false
	})
	return path
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any, []map[string]any:
		return true
	}
	return false
}

// elements calls f with each element of v, an object or an array (map
// entries in key order when sorted; array elements with their index), until
// f returns false.
func elements(v any, sorted bool, f func(key string, e any) bool) {
	switch t := v.(type) {
	case map[string]any:
		if !sorted {
			for k, e := range t {
				if !f(k, e) {
					return
				}
			}
			return
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !f(k, t[k]) {
				break
			}
		}
	case []any:
		for i, e := range t {
			if !f(strconv.Itoa(i), e) {
				break
			}
		}
	case []map[string]any:
		for i, e := range t {
			if !f(strconv.Itoa(i), e) {
				break
			}
		}
	}
}

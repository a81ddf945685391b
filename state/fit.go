package state

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Warning is a value the state accepted after fitting it to a limit (text
// cut to its length). Path names the field as FieldError's does
// ("players.3.name").
type Warning struct {
	Path   string
	Reason string
}

func (w Warning) String() string { return w.Path + ": " + w.Reason }

// MaxWarningLines is how many warnings WarningLines lists before it sums
// up the rest in one line.
const MaxWarningLines = 16

// WarningLines returns the warnings as lines, each path prefixed with
// prefix ("state." in a feed reply, "server." from the config), at most
// MaxWarningLines of them and then "… and N more" (a replace of 4,096
// players with long names gets a short reply); nil when there are none.
func WarningLines(prefix string, ws []Warning) []string {
	if len(ws) == 0 {
		return nil
	}
	lines := make([]string, 0, min(len(ws), MaxWarningLines+1))
	for i, w := range ws {
		if i == MaxWarningLines {
			lines = append(lines, fmt.Sprintf("… and %d more values cut the same way", len(ws)-i))
			break
		}
		lines = append(lines, prefix+w.String())
	}
	return lines
}

// fix is a value the decoder accepted in another form than it was given:
// the document keeps val at path, and warn, when not "", says why (a cut).
// Integers written as floats and unknown pings are fixed silently.
type fix struct {
	path []string
	val  any
	warn string
}

// note records a fix at path (copied: callers pass a slice on their stack).
func (d *decoder) note(val any, warn string, path ...string) {
	d.fixes = append(d.fixes, fix{path: slices.Clone(path), val: val, warn: warn})
}

// sortFixes orders fixes by path, so that the warnings come in key order
// and applyFixes finds the fixes under one key next to each other.
func sortFixes(fixes []fix) {
	slices.SortFunc(fixes, func(a, b fix) int { return slices.Compare(a.path, b.path) })
}

// warnings returns the warnings of sorted fixes.
func warnings(fixes []fix) []Warning {
	var ws []Warning
	for _, f := range fixes {
		if f.warn != "" {
			ws = append(ws, Warning{Path: strings.Join(f.path, "."), Reason: f.warn})
		}
	}
	return ws
}

// applyFixes returns doc with sorted fixes applied. doc is not changed:
// each object or array on a fix's path is copied once.
func applyFixes(doc map[string]any, fixes []fix) map[string]any {
	if len(fixes) == 0 {
		return doc
	}
	out, _ := applyAt(doc, fixes, 0).(map[string]any)
	return out
}

// applyAt applies fixes, which share their first depth path elements and
// are sorted, to v, the value at that path.
func applyAt(v any, fixes []fix, depth int) any {
	if len(fixes[0].path) == depth {
		return fixes[0].val
	}
	switch t := v.(type) {
	case map[string]any:
		c := maps.Clone(t)
		eachGroup(fixes, depth, func(k string, g []fix) { c[k] = applyAt(c[k], g, depth+1) })
		return c
	case []any:
		c := slices.Clone(t)
		eachGroup(fixes, depth, func(k string, g []fix) {
			if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(c) {
				c[i] = applyAt(c[i], g, depth+1)
			}
		})
		return c
	}
	return v // cannot happen: fixes follow the decoded document
}

// eachGroup calls f with each run of fixes that share path[depth].
func eachGroup(fixes []fix, depth int, f func(key string, g []fix)) {
	for len(fixes) > 0 {
		k := fixes[0].path[depth]
		n := 1
		for n < len(fixes) && fixes[n].path[depth] == k {
			n++
		}
		f(k, fixes[:n])
		fixes = fixes[n:]
	}
}

// cutText returns s cut to max characters (runes) and its length in
// characters when it was longer; s and 0 when it fits. It never splits a
// character.
func cutText(s string, max int) (string, int) {
	if len(s) <= max { // bytes >= characters
		return s, 0
	}
	n, end := 0, len(s)
	for i := range s {
		if n == max {
			end = i
		}
		n++
	}
	if n <= max {
		return s, 0
	}
	return s[:end], n
}

// badText says what is wrong with a string no field takes: NUL characters
// (C strings in A2S, GameSpy4 and SQP end at them) and invalid UTF-8 (a
// feed line is checked whole; this guards the other ways in).
func badText(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		return "contains a NUL character"
	}
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	return ""
}

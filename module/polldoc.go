package module

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/queryd/queryd/state"
)

// DocText makes s fit a state string of at most max characters: invalid
// UTF-8 becomes U+FFFD, NUL characters are removed, and what is past max is
// cut. Polls use it for every string they put in a state document.
func DocText(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i]
		}
		n++
	}
	return s
}

// DocNum is an integer as the state document holds numbers.
func DocNum(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// DocClamp bounds n to [lo, hi].
func DocClamp(n, lo, hi int64) int64 { return min(max(n, lo), hi) }

// DocCount is a count the state holds (0 to 65535, e.g. max_players) read
// from text; ok is false for anything else (which then stays a rule).
func DocCount(v string) (json.Number, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 || n > state.MaxMaxPlayers {
		return "", false
	}
	return DocNum(n), true
}

// DocRules collects a state document's rules: keys fitted to the state's
// limits (an empty key, or one longer than state.MaxRuleKeyLen, is left
// out; the first of a repeated key is kept), values cut to
// state.MaxRuleValueLen, at most state.MaxRules of them.
type DocRules map[string]any

// Add adds k = v unless k is taken, unusable, or the rules are full.
func (r DocRules) Add(k, v string) {
	k = DocText(k, state.MaxRuleKeyLen+1)
	if k == "" || utf8.RuneCountInString(k) > state.MaxRuleKeyLen || len(r) >= state.MaxRules {
		return
	}
	if _, taken := r[k]; !taken {
		r[k] = DocText(v, state.MaxRuleValueLen)
	}
}

// DocSet sets doc[field] = v when the state accepts v as that field (its
// type and limits), and reports whether it did: a poll keeps what the
// state refuses as a rule instead, so that one odd value does not make
// the whole answer refused.
func DocSet(doc map[string]any, field string, v any) bool {
	n, err := state.Normalize(map[string]any{field: v})
	if err != nil || len(state.ValidateAll(n)) > 0 {
		return false
	}
	doc[field] = n[field]
	return true
}

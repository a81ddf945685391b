package upstream

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/queryd/queryd/state"
)

// text makes s fit a state string of at most max characters: invalid UTF-8
// becomes U+FFFD, NUL characters are removed, and what is past max is cut.
func text(s string, max int) string {
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

// num is an integer as the state document holds numbers.
func num(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// clamp bounds n to [lo, hi].
func clamp(n, lo, hi int64) int64 { return min(max(n, lo), hi) }

// rules collects a document's rules: keys fitted to the state's limits
// (an empty key, or one longer than state.MaxRuleKeyLen, is left out; the
// first of a repeated key is kept), values cut to state.MaxRuleValueLen, at
// most state.MaxRules of them.
type rules map[string]any

// add adds k = v unless k is taken, unusable, or the rules are full.
func (r rules) add(k, v string) {
	k = text(k, state.MaxRuleKeyLen+1)
	if k == "" || utf8.RuneCountInString(k) > state.MaxRuleKeyLen || len(r) >= state.MaxRules {
		return
	}
	if _, taken := r[k]; !taken {
		r[k] = text(v, state.MaxRuleValueLen)
	}
}

// Package nearest finds the known name a mistyped one was probably meant to
// be, for "unknown key" errors: `server.max_player: unknown field (did you
// mean max_players?)`.
package nearest

// Name returns the name in names nearest to word — the fewest single-letter
// insertions, deletions, substitutions and swaps of two neighbours — when it
// is near enough to be a typo: at most 2 edits, and fewer than half of
// word's letters. Ties go to the first in names. It returns "" when none is.
func Name(word string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if n == word {
			return ""
		}
		if d := distance(word, n); d < bestD && 2*d < len(word) {
			best, bestD = n, d
		}
	}
	return best
}

// Hint is Name as the end of an error message: " (did you mean NAME?)", or
// "" when no name is near.
func Hint(word string, names []string) string {
	if n := Name(word, names); n != "" {
		return " (did you mean " + n + "?)"
	}
	return ""
}

// distance is the optimal string alignment distance between a and b, by
// bytes (keys are ASCII).
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

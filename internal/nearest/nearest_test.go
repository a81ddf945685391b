package nearest

import "testing"

func TestName(t *testing.T) {
	keys := []string{"name", "map", "max_players", "players", "rules", "udp", "workers", "recv_buffer", "stale_after"}
	for _, c := range []struct{ word, want string }{
		{"max_player", "max_players"},  // one letter short
		{"max_playres", "max_players"}, // two neighbours swapped
		{"maxplayers", "max_players"},
		{"udpp", "udp"},
		{"worker", "workers"},
		{"stale_afer", "stale_after"},
		{"nmae", "name"},
		{"max_players", ""}, // known: nothing to suggest
		{"x", ""},           // too short to guess
		{"ma", ""},          // 1 edit from map, but half of the word
		{"listen", ""},      // nothing near
		{"", ""},
	} {
		if got := Name(c.word, keys); got != c.want {
			t.Errorf("Name(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if h := Hint("max_player", keys); h != " (did you mean max_players?)" {
		t.Errorf("Hint: %q", h)
	}
	if h := Hint("zzz", keys); h != "" {
		t.Errorf("Hint with nothing near: %q", h)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"ca", "abc", 3}, {"same", "same", 0}} {
		if got := distance(c.a, c.b); got != c.d {
			t.Errorf("distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
		if got := distance(c.b, c.a); got != c.d {
			t.Errorf("distance(%q, %q) = %d, want %d", c.b, c.a, got, c.d)
		}
	}
}

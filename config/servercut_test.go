package config

import (
	"slices"
	"strings"
	"testing"
)

// TestServerTextCutIsWarning: [server] text over its limit is cut as the
// feed's is: a warning with its key (queryd check shows it), not an error;
// what the state still refuses is an error.
func TestServerTextCutIsWarning(t *testing.T) {
	c, err := Parse([]byte("[server]\nname = \"" + strings.Repeat("n", 300) + "\"\nmax_players = 8.0\n" +
		"[server.players.3]\nname = \"" + strings.Repeat("é", 65) + "\"\nping = -1\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := c.Warnings()
	for _, want := range []string{"server.name: cut to 256 characters (was 300)", "server.players.3.name: cut to 64 characters (was 65)"} {
		if !slices.Contains(w, want) {
			t.Errorf("warnings %q lack %q", w, want)
		}
	}
	_, err = Parse([]byte("[server]\nfolder = \"" + strings.Repeat("f", 129) + "\"\n"))
	if err == nil || !strings.Contains(err.Error(), "server.folder: too long: 129 characters, at most 128") {
		t.Errorf("a long folder: %v", err)
	}
	_, err = Parse([]byte("[server]\nmapp = \"x\"\n"))
	if err == nil || !strings.Contains(err.Error(), "server.mapp: unknown field (did you mean map?)") {
		t.Errorf("an unknown field: %v", err)
	}
}

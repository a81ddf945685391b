package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
)

// TestErrorLines: every error of a config names the line of its key:
// decoding and validation errors alike, in a table, a dotted key, an
// inline table, an element of a value array written over several lines,
// each table of an [[array of tables]] (the decoder keeps only the last
// one's line), [server]'s fields and players, and a key quoted in the
// file. An error about a key the file does not have takes its table's
// line. Before, only the decoder's type errors had one.
func TestErrorLines(t *testing.T) {
	text := `# a comment
[listen]
udp = [
  "0.0.0.0:1",
  "x",            # line 5
]
workers = -1      # line 7

[feed]
"stale_after" = "abc"   # line 10
limits.x = 1

[relay]
upstream = "x:1"

[[quake3.masters]]
address = 5       # line 17
heartbeat = "A"

[[quake3.masters]]    # line 20
address = "m:1"
heartbeat = "a b" # line 22
bogus = 1         # line 23

[quake3.info]
k = 5             # line 26

[quake3]
packet_rate = -2  # line 29
query_port_is_join_port = "x"

[server]
name = """
two lines"""
max_players = -3  # line 35
players = { "7" = { name = 5 } }  # line 36

[gamespy4]
hostport = 0
plugins = { a = 1 }   # line 40
`
	_, err := parse(text)
	var errs config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("not Errors: %v", err)
	}
	want := map[string]int{
		"listen.udp[1]":                  5,
		"listen.workers":                 7,
		"feed.stale_after":               10,
		"feed.limits":                    11,
		"quake3.masters[0].address":      17,
		"quake3.masters[1].heartbeat":    22,
		"quake3.masters[1].bogus":        23,
		"quake3.info.k":                  26,
		"quake3.packet_rate":             29,
		"quake3.query_port_is_join_port": 30,
		"server.max_players":             35,
		"server.players.7.name":          36,
		"gamespy4.plugins":               40,
	}
	got := map[string]int{}
	for _, e := range errs {
		got[e.Key] = e.Line
		if e.Line == 0 {
			t.Errorf("no line: %v", e)
		}
		if !strings.HasSuffix(e.Error(), ")") || !strings.Contains(e.Error(), " (line ") {
			t.Errorf("Error() does not end in its line: %q", e.Error())
		}
	}
	for key, line := range want {
		if got[key] != line {
			t.Errorf("%s: line %d, want %d (errors: %v)", key, got[key], line, errs)
		}
	}
}

// TestLocate: an error added after Parse (queryd check's: a name that does
// not resolve, an address in use) gets its key's line, or its table's when
// the key is not in the file, or none when neither is.
func TestLocate(t *testing.T) {
	c, err := config.Parse([]byte("[admin]\nlisten = \"127.0.0.1:9273\"\n\n[relay]\nupstream = \"game.example:27016\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	errs := config.Errors{{Key: "relay.upstream", Reason: "x"}, {Key: "relay.max_sessions", Reason: "y"}, {Key: "feed.socket", Reason: "z"}, {Key: "admin.listen", Reason: "w", Line: 9}}
	c.Locate(errs)
	for i, want := range []int{5, 4, 0, 9} {
		if errs[i].Line != want {
			t.Errorf("%s: line %d, want %d", errs[i].Key, errs[i].Line, want)
		}
	}
	if got := errs[2].Error(); got != "feed.socket: z" {
		t.Errorf("an error without a line: %q", got)
	}
}

package agones

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/queryd/queryd/state"
)

// TestParseWatchLine: each malformed line is refused with its reason,
// never a panic; good lines parse.
func TestParseWatchLine(t *testing.T) {
	for _, c := range []struct{ line, reason string }{
		{`{"result":{"status":{"state":"Ready"}}}`, ""},
		{`{"result":{"object_meta":null,"status":{"state":"Ready","counters":null,"lists":{"p":null}}}}`, ""},
		{`{"result":{"status":{"state":"Ready","counters":{"p":{"count":"9223372036854775807","capacity":null}}}},"extra":1}`, ""},
		{`{"result":{"status":{}}}`, ""},
		{``, ReasonNotJSON},
		{"\t \r", ReasonNotJSON},
		{`{`, ReasonNotJSON},
		{`{"result":{}}} `, ReasonNotJSON},
		{`{"result":{}} {"result":{}}`, ReasonNotJSON},
		{"\xff\xfe", ReasonNotJSON},
		{`null`, ReasonShape},
		{`"text"`, ReasonShape},
		{`{}`, ReasonShape},
		{`{"result":[]}`, ReasonShape},
		{`{"result":{"status":null}}`, ReasonShape},
		{`{"result":{"status":{"state":5}}}`, ReasonShape},
		{`{"result":{"status":{"counters":{"p":{"count":"9223372036854775808"}}}}}`, ReasonShape},
		{`{"result":{"status":{"counters":{"p":{"count":1.5}}}}}`, ReasonShape},
		{`{"result":{"status":{"counters":{"p":{"count":"0x10"}}}}}`, ReasonShape},
		{`{"result":{"status":{"lists":{"p":{"values":[1]}}}}}`, ReasonShape},
		{`{"result":{"status":{"ports":{"name":"default"}}}}`, ReasonShape},
		{`{"result":{"object_meta":{"labels":["a"]},"status":{}}}`, ReasonShape},
		{`{"error":{"code":2,"message":"boom"}}`, ReasonError},
		{`{"error":{},"result":{"status":{}}}`, ReasonError},
	} {
		gs, err := parseWatchLine([]byte(c.line))
		var r *refusal
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("%q: refused: %v", c.line, err)
		case c.reason == "" && gs == nil:
			t.Errorf("%q: no GameServer", c.line)
		case c.reason != "" && (!errors.As(err, &r) || r.reason != c.reason):
			t.Errorf("%q: got %v, want refused as %s", c.line, err, c.reason)
		}
	}
}

// TestParseRealGameServer: the bytes the real SDK server sent (local
// mode, from testdata) parse and map.
func TestParseRealGameServer(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "watch-line.json"))
	if err != nil {
		t.Fatal(err)
	}
	gs, err := parseWatchLine(b)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := mapGameServer(gs, defaultMapping, playerIDs{})
	if err := state.Validate(doc); err != nil {
		t.Fatal(err)
	}
	if js(t, doc) != `{"game_port":7654,"map":"de_dust2","max_players":16,"name":"My Agones Server","players":{"0":{"name":"bob"}},"rules":{"mp_timelimit":"30"}}` ||
		gs.Status.State != "Allocated" {
		t.Errorf("got %s, state %q", js(t, doc), gs.Status.State)
	}
}

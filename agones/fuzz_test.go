package agones

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/queryd/queryd/state"
)

// FuzzWatchLine: any line is refused or parses, never panics; whatever
// parses maps (twice, the second time with the first's player ids) to a
// document the state takes as its Agones layer.
func FuzzWatchLine(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "watch-line.json")); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		gsLine("Ready", "x"),
		`{"result":{"object_meta":{"annotations":{"agones.dev/sdk-max_players":"7","queryd.dev/rule.a":"b","queryd.dev/tags":"a,b"}},` +
			`"status":{"state":"Allocated","ports":[{"name":"default","port":"1"}],"lists":{"players":{"capacity":"9","values":["a","a",""]}}}}}`,
		`{"result":{"status":{"counters":{"players":{"count":"5000","capacity":"-1"}}}}}`,
		`{"error":{"code":1,"message":"m"}}`,
		`{"result":{"objectMeta":{"labels":{"queryd.dev/name":"\u0000"}},"status":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		gs, err := parseWatchLine(line)
		if err != nil {
			if _, ok := err.(*refusal); !ok {
				t.Fatalf("an error that is not a refusal: %T %v", err, err)
			}
			return
		}
		store, err := state.NewStore(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ids playerIDs
		for range 2 {
			var doc map[string]any
			doc, ids = mapGameServer(gs, defaultMapping, ids)
			if err := state.Validate(doc); err != nil {
				t.Fatalf("mapped to a document the state refuses: %v\n%s\n%v", err, line, doc)
			}
			if _, err := store.SetGameServer(doc); err != nil {
				t.Fatalf("the store refuses the document: %v", err)
			}
		}
		_ = ClassOf(gs.Status.State).String()
	})
}

// FuzzLineReader: lines come out the same whatever the reads' sizes, none
// longer than max or holding a newline, with a buffer of at most max+1.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\r\n\nccc"), uint8(2))
	f.Add([]byte(strings.Repeat("x", 300)+"\nshort\n"), uint8(16))
	f.Fuzz(func(t *testing.T, data []byte, m uint8) {
		max := int(m%64) + 1
		whole, r1, _ := readAll(bytes.NewReader(data), max)
		bytewise, r2, _ := readAll(iotest.OneByteReader(bytes.NewReader(data)), max)
		if !slices.Equal(whole, bytewise) {
			t.Fatalf("reads of different sizes disagree: %q vs %q", whole, bytewise)
		}
		for _, l := range whole {
			if l != "ERR:too long" && (len(l) > max || strings.Contains(l, "\n")) {
				t.Fatalf("line %q with max %d", l, max)
			}
		}
		if r1.peak > max+1 || r2.peak > max+1 {
			t.Fatalf("buffer peaks %d, %d with max %d", r1.peak, r2.peak, max)
		}
	})
}

package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// nest is n opening brackets, inner, and n closing ones ("{a=" for tables).
func nest(open, inner, close string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// realDepth is the depth (see MaxDepth) of the deepest value of a decoded
// document: root keys are at 1.
func realDepth(v any, d int) int {
	deepest := d
	visit := func(e any) { deepest = max(deepest, realDepth(e, d+1)) }
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			visit(e)
		}
	case []any:
		for _, e := range t {
			visit(e)
		}
	case []map[string]any:
		for _, e := range t {
			visit(e)
		}
	}
	return deepest
}

func TestCheckDepth(t *testing.T) {
	deep := nest("[", "1", "]", 40) // far too deep anywhere
	cases := []struct {
		name string
		text string
		line int    // 0: accepted
		key  string // the key the error names
	}{
		{"32 arrays at the top", "x = " + nest("[", "", "]", 32), 0, ""},
		{"33 arrays at the top", "x = " + nest("[", "", "]", 33), 1, "x"},
		{"a value at 32", "x = " + nest("[", "1", "]", 31), 0, ""},
		{"a value at 33", "x = " + nest("[", "1", "]", 32), 1, "x"},
		{"inline tables at 32", "[server]\nx = " + nest("{a=", "1", "}", 30), 0, ""},
		{"inline tables at 33", "[server]\nx = " + nest("{a=", "1", "}", 31), 2, "server.x"},
		{"dotted key at 32", "[server]\n" + strings.Repeat("a.", 30) + "a = 1", 0, ""},
		{"dotted key at 33", "[server]\n" + strings.Repeat("a.", 31) + "a = 1", 2, "server." + strings.TrimSuffix(strings.Repeat("a.", 32), ".")},
		{"dotted keys in inline tables", "x = {a.b.c = {d.e.f = " + nest("[", "1", "]", 26) + "}}", 1, "x"},
		{"table header at 32", "[" + strings.TrimSuffix(strings.Repeat("t.", 32), ".") + "]", 0, ""},
		{"table header at 33", "\n\n[" + strings.TrimSuffix(strings.Repeat("t.", 33), ".") + "]", 3, strings.TrimSuffix(strings.Repeat("t.", 33), ".")},
		{"array of tables at 33", "[[" + strings.TrimSuffix(strings.Repeat("t.", 32), ".") + "]]", 1, strings.TrimSuffix(strings.Repeat("t.", 32), ".")},
		{"table depth adds to keys", "[a.b.c]\nx = " + nest("[", "1", "]", 28) + "\n[d]\ny = " + nest("[", "1", "]", 30), 0, ""},
		{"too deep under a deep table", "[a.b.c]\nx = " + nest("[", "1", "]", 29), 2, "a.b.c.x"},
		{"quoted key with dots is one part", `"` + strings.Repeat("a.", 40) + `" = 1`, 0, ""},
		{"quoted header with brackets", `["[[[[" . '{{{{']` + "\nx = 1", 0, ""},
		{"brackets in a basic string", `x = "` + deep + `"`, 0, ""},
		{"brackets in a literal string", `x = '` + deep + `'`, 0, ""},
		{"escaped quote in a basic string", `x = "a\"` + deep + `"`, 0, ""},
		{"escaped backslash ends the string", `x = ["a\\", ` + deep + `]`, 1, "x"},
		{"a literal string has no escapes", `x = ['a\', ` + deep + `]`, 1, "x"},
		{"brackets in a multi-line basic string", "x = \"\"\"\n" + deep + "\n\" \"\" \\\"\"\" " + deep + "\n\"\"\"", 0, ""},
		{"brackets in a multi-line literal string", "x = '''\n" + deep + "\n' '' \n" + deep + "'''", 0, ""},
		{"multi-line string ending in quotes", "x = [\"\"\"a\"\"\"\"\", \n" + deep + "]", 2, "x"},
		{"multi-line literal ending in quotes", "x = ['''a''''', \n" + deep + "]", 2, "x"},
		{"line-ending backslash", "x = \"\"\"a \\\n  " + deep + "\"\"\"\ny = 1", 0, ""},
		{"brackets in a comment", "# " + deep + "\nx = 1 # " + deep, 0, ""},
		{"comment ended by a carriage return", "# c\rx = " + deep, 1, "x"},
		{"comments inside an array", "x = [ # ]]]]\n  1, # [[[[\n  " + deep + ",\n]", 3, "x"},
		{"newlines inside an inline table", "x = {\n a = 1,\n b = " + deep + "\n}", 3, "x"},
		{"a datetime with a space", "x = [1979-05-27 07:32:00Z, " + deep + "]", 1, "x"},
		{"after a closed deep array", "x = [" + nest("[", "", "]", 30) + ", " + nest("[", "", "]", 30) + "]", 0, ""},
		{"arrays side by side", "x = [" + strings.Repeat(nest("[", "1", "]", 30)+", ", 2000) + "]", 0, ""},
		{"unterminated", "x = " + strings.Repeat("[", 100000), 1, "x"},
		{"not TOML", "x = [}]]}" + deep, 1, "x"},
	}
	for _, c := range cases {
		err := checkDepth([]byte(c.text), MaxDepth)
		var le *LimitError
		switch {
		case c.line == 0 && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.line != 0 && !errors.As(err, &le):
			t.Errorf("%s: want a LimitError, got %v", c.name, err)
		case c.line != 0 && (le.Line != c.line || le.Key != c.key && !strings.HasSuffix(le.Key, "...")):
			t.Errorf("%s: line %d key %q, want line %d key %q", c.name, le.Line, le.Key, c.line, c.key)
		}
		// Where the decoder accepts the text, the scanner agrees with the
		// depth it decodes.
		var v map[string]any
		if _, derr := toml.Decode(c.text, &v); derr == nil {
			if d := realDepth(v, 0); (d > MaxDepth) != (err != nil) {
				t.Errorf("%s: decoded depth %d, scanner: %v", c.name, d, err)
			}
		}
	}
}

func TestKeyParts(t *testing.T) {
	// Each line's parts are at depths 2, 3 and 4 under [server]: 9.
	lines := func(n int) string {
		var b strings.Builder
		b.WriteString("[server]\n")
		for i := range n {
			b.WriteString("k")
			b.WriteString(strings.Repeat("x", i%7))
			b.WriteString(".a.b = 1\n")
		}
		return b.String()
	}
	under := (MaxKeyParts - 1) / 9
	if err := checkDepth([]byte(lines(under)), MaxDepth); err != nil {
		t.Fatalf("%d parts refused: %v", under*9+1, err)
	}
	err := checkDepth([]byte(lines(under+1)), MaxDepth)
	var le *LimitError
	if !errors.As(err, &le) || le.Line != under+2 || !strings.Contains(le.Reason, "more keys") {
		t.Fatalf("%d parts: %v", (under+1)*9+1, err)
	}
	// A maximal [server] document fits: 4,096 players as tables of five
	// fields and 1,024 rules.
	var b strings.Builder
	for i := range 4096 {
		b.WriteString("[server.players." + strconv.Itoa(i) + "]\nname = \"n\"\nscore = 1\nping = 2\nbot = false\ntime = 1.5\n")
	}
	b.WriteString("[server.rules]\n")
	for i := range 1024 {
		b.WriteString("r" + strconv.Itoa(i) + " = \"v\"\n")
	}
	if err := checkDepth([]byte(b.String()), MaxDepth); err != nil {
		t.Fatalf("a maximal [server]: %v", err)
	}
}

// TestHostileConfigs: the configs of the finding (a 2 MB [server] value of
// arrays 1,000,000 deep, which overflowed the stack; inline tables 10,000
// deep in 40 KB, 16 s and 4 GB; 100,000 deep, over 10 GB) and their
// neighbours are each refused within a second, with the key and line.
func TestHostileConfigs(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"inline tables 10,000 deep", "[server]\nx = " + nest("{a=", "1", "}", 10000) + "\n", "server.x: nested deeper than 32 levels"},
		{"inline tables 100,000 deep", "[server]\nx = " + nest("{a=", "1", "}", 100000) + "\n", "server.x: nested deeper than 32 levels"},
		{"arrays 100,000 deep", "[server]\nx = " + nest("[", "", "]", 100000) + "\n", "server.x: nested deeper than 32 levels"},
		{"dotted key 10,000 parts", "[server]\n" + strings.Repeat("a.", 9999) + "a = 1\n", "nested deeper than 32 levels (line 2)"},
		{"header 10,000 parts", "[server" + strings.Repeat(".a", 9999) + "]\n", "nested deeper than 32 levels (line 1)"},
		{"arrays 500,000 deep (1 MB)", "[server]\nx = " + nest("[", "", "]", 500000) + "\n", "server.x: nested deeper than 32 levels (line 2)"},
		{"arrays 1,000,000 deep (2 MB)", "[server]\nx = " + nest("[", "", "]", 1000000) + "\n", "larger than 1048576 bytes"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		path := filepath.Join(dir, "hostile.toml")
		if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err := Load(path)
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error with %q", c.name, err, c.want)
		}
		if took > time.Second {
			t.Errorf("%s: refused after %v; want under 1 s", c.name, took)
		}
		t.Logf("%s (%d bytes): refused in %v: %.120v", c.name, len(c.text), took, err)
	}
}

// TestLoadReadsAtMostTheLimit: a file over MaxFileSize is refused after
// reading MaxFileSize+1 bytes of it, not all of it; one of MaxFileSize bytes
// is read.
func TestLoadReadsAtMostTheLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.toml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(256 << 20); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = Load(big)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Fatalf("a 256 MiB file: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("refusing a 256 MiB file allocated %d bytes; want at most 8 MiB", alloc)
	}

	exact := filepath.Join(dir, "exact.toml")
	text := append([]byte(nil), Default...)
	text = append(text, '#')
	text = append(text, strings.Repeat("x", MaxFileSize-len(text)-1)...)
	text = append(text, '\n')
	if err := os.WriteFile(exact, text, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(exact, demoStubs(t)...); err != nil {
		t.Fatalf("a config of exactly %d bytes: %v", len(text), err)
	}
	if err := os.WriteFile(exact, append(text, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(exact); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a config of %d bytes: %v", len(text)+1, err)
	}
}

// FuzzCheckDepth: the depth scanner never panics, and wherever the TOML
// decoder accepts a text, the scanner refuses it when the decoded document
// is deeper than the limit (a small one here, 3, so that random texts cross
// it), and accepts it when it is not: exactly without an [[array of
// tables]]; with one, what is at most half as deep.
func FuzzCheckDepth(f *testing.F) {
	for _, s := range []string{
		"x = [[[1]]]", "x = {a={b=1}}", "[a.b]\nc = 1", "[[a.b]]\nc = [1]", "a.b.c = 1",
		`x = "[[["`, `x = '{{{'`, "x = \"\"\"\n[[\n\"\"\"", "x = '''[[''''", "# [[[\nx = 1",
		"x = [ # ]]\n [1],\n]", "x = {\n a = [1]\n}", `"a.b.c" = [1]`, "x = [1979-05-27 07:32:00Z, [1]]",
		"# c\rx = [[[1]]]", `x = ["a\\", [[1]]]`, "x = [\"\"\"a\"\"\"\"\", [[1]]]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := checkDepth(data, 3)
		var v map[string]any
		if _, derr := toml.Decode(string(data), &v); derr != nil {
			return
		}
		d := realDepth(v, 0)
		if d > 3 && err == nil {
			t.Fatalf("decoded depth %d, the scanner at 3 accepted it", d)
		}
		// after an [[array of tables]], a header's parts may count two each
		if err != nil && (2*d <= 3 || !bytes.Contains(data, []byte("[[")) && d <= 3) {
			t.Fatalf("decoded depth %d, refused by the scanner at 3: %v", d, err)
		}
	})
}

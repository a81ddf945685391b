package config

import "testing"

// TestKeyLines reads every form of key and table the way errors write
// them.
func TestKeyLines(t *testing.T) {
	got := keyLines([]byte(`a = 1
"b.c" = 2
'd' = { e = [1, { f = 2 }], g = 3 }
[h.'i j']
k.l = """
x
"""
m = 4
[[n]]
[[n]]
[n.o]
p = [
  [1],
  2,
]
`))
	for key, want := range map[string]int{
		`a`: 1, `"b.c"`: 2, `d`: 3, `d.e`: 3, `d.e[1]`: 3, `d.e[1].f`: 3, `d.g`: 3,
		`h`: 4, `h."i j"`: 4, `h."i j".k`: 5, `h."i j".k.l`: 5, `h."i j".m`: 8,
		`n`: 9, `n[0]`: 9, `n[1]`: 10, `n[1].o`: 11, `n[1].o.p`: 12, `n[1].o.p[0]`: 13, `n[1].o.p[1]`: 14,
	} {
		if got[key] != want {
			t.Errorf("%s: line %d, want %d", key, got[key], want)
		}
	}
}

// FuzzKeyLines: keyLines ends on any text (it runs only on text the
// decoder accepted, but must not hang or panic on any), and every line it
// gives is one of the text's.
func FuzzKeyLines(f *testing.F) {
	for _, seed := range []string{"a = 1\n[b]\nc = [1, {d = 2}]\n", "[[n]]\n[n.o]\np = \"\"\"\nx\n\"\"\"\n", "'a'.\"b\" = {", "[", "x = [[[", "\"\\"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := 1
		for _, c := range data {
			if c == '\n' {
				lines++
			}
		}
		for k, n := range keyLines(data) {
			if n < 1 || n > lines || len(k) > maxLineKey {
				t.Fatalf("%q: key %q on line %d of %d", data, k, n, lines)
			}
		}
	})
}

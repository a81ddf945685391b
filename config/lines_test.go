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

package state

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestParseIntegral(t *testing.T) {
	for _, tc := range []struct {
		in    string
		ok    bool
		neg   bool
		mag   uint64
		huge  bool
		plain bool
	}{
		{"3", true, false, 3, false, true},
		{"3.0", true, false, 3, false, false},
		{"3e0", true, false, 3, false, false},
		{"3E+0", true, false, 3, false, false},
		{"30e-1", true, false, 3, false, false},
		{"0.3e1", true, false, 3, false, false},
		{"300e-2", true, false, 3, false, false},
		{"-7", true, true, 7, false, true},
		{"-7.000", true, true, 7, false, false},
		{"0", true, false, 0, false, true},
		{"-0", true, false, 0, false, false},
		{"-0.0", true, false, 0, false, false},
		{"0e99999999999999999999999", true, false, 0, false, false},
		{"0.000e-5", true, false, 0, false, false},
		{"100", true, false, 100, false, true},
		{"1e2", true, false, 100, false, false},
		{"18446744073709551615", true, false, math.MaxUint64, false, true},
		{"18446744073709551616", true, false, 0, true, true},
		{"1.8446744073709551615e19", true, false, math.MaxUint64, false, false},
		{"1e19", true, false, 1e19, false, false},
		{"1e20", true, false, 0, true, false},
		{"1e400", true, false, 0, true, false},
		{"-1e400", true, true, 0, true, false},
		{"1" + strings.Repeat("0", 100000) + ".0", true, false, 0, true, false},
		{"1.5", false, false, 0, false, false},
		{"-1.5", false, false, 0, false, false},
		{"1e-400", false, false, 0, false, false},
		{"1e-99999999999999999999999", false, false, 0, false, false},
		{"0.5e1", true, false, 5, false, false},
		{"0.55e1", false, false, 0, false, false},
		{"", false, false, 0, false, false},
		{"-", false, false, 0, false, false},
		{".5", false, false, 0, false, false},
		{"5.", false, false, 0, false, false},
		{"1e", false, false, 0, false, false},
		{"1e+", false, false, 0, false, false},
		{"+1", false, false, 0, false, false},
		{"007", false, false, 0, false, false},
		{"-01.0", false, false, 0, false, false},
		{"0x10", false, false, 0, false, false},
		{"1_000", false, false, 0, false, false},
		{"NaN", false, false, 0, false, false},
	} {
		n, ok := parseIntegral(tc.in)
		if ok != tc.ok {
			t.Errorf("%.30s: ok %v, want %v", tc.in, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		want := integral{neg: tc.neg, mag: tc.mag, huge: tc.huge, plain: tc.plain}
		if tc.huge {
			n.mag = 0 // meaningless when huge
		}
		if n != want {
			t.Errorf("%.30s: %+v, want %+v", tc.in, n, want)
		}
	}
}

func TestIntegralIn(t *testing.T) {
	for _, tc := range []struct {
		in       string
		min, max int64
		want     int64
		ok       bool
	}{
		{"-2147483648.0", math.MinInt32, math.MaxInt32, math.MinInt32, true},
		{"-2147483649", math.MinInt32, math.MaxInt32, 0, false},
		{"2147483647e0", math.MinInt32, math.MaxInt32, math.MaxInt32, true},
		{"2147483648.0", math.MinInt32, math.MaxInt32, 0, false},
		{"-9223372036854775808", math.MinInt64, math.MaxInt64, math.MinInt64, true},
		{"-9223372036854775809", math.MinInt64, math.MaxInt64, 0, false},
		{"9223372036854775807", math.MinInt64, math.MaxInt64, math.MaxInt64, true},
		{"-1", 0, 65535, 0, false},
		{"-0.0", 0, 65535, 0, true},
		{"65535.0", 0, 65535, 65535, true},
		{"65536", 0, 65535, 0, false},
		{"1e19", 0, math.MaxInt32, 0, false},
		{"0.0", 1, 65535, 0, false},
		{"1.0", 1, 65535, 1, true},
	} {
		n, ok := parseIntegral(tc.in)
		got, in := n.in(tc.min, tc.max)
		if !ok || in != tc.ok || got != tc.want {
			t.Errorf("%s in [%d, %d] = %d, %v; want %d, %v", tc.in, tc.min, tc.max, got, in, tc.want, tc.ok)
		}
	}
}

// FuzzParseIntegral compares parseIntegral with math/big on numbers whose
// exponent big can afford.
func FuzzParseIntegral(f *testing.F) {
	for _, s := range []string{"3", "3.0", "3e0", "-0.0", "1e19", "1.5", "18446744073709551616", "0.3e1", "1e-3", "-12.50e1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parseIntegral(s)
		_, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
		if hasExp {
			if e, ok := parseExponent(exp); !ok || e > 1000 || e < -1000 {
				return // big.Rat would spend its time on 10^e
			}
		}
		if !isJSONNumber(s) {
			if ok {
				t.Fatalf("%q is not a JSON number but parsed as %+v", s, n)
			}
			return
		}
		r, rok := new(big.Rat).SetString(s)
		if !rok {
			t.Fatalf("big cannot read the JSON number %q", s)
		}
		if ok != r.IsInt() {
			t.Fatalf("%q: integer %v, big says %v", s, ok, r.IsInt())
		}
		if !ok {
			return
		}
		v := r.Num()
		if huge := v.CmpAbs(new(big.Int).SetUint64(math.MaxUint64)) > 0; huge != n.huge {
			t.Fatalf("%q: huge %v, big says %v", s, n.huge, v)
		}
		if !n.huge && (new(big.Int).Abs(v).Uint64() != n.mag || (v.Sign() < 0) != n.neg) {
			t.Fatalf("%q: %+v, big says %v", s, n, v)
		}
	})
}

// isJSONNumber reports whether s follows JSON's number grammar.
func isJSONNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || (s[0] == '0' && i > 1) {
		return false
	}
	s = s[i:]
	if strings.HasPrefix(s, ".") {
		j := 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 1 {
			return false
		}
		s = s[j:]
	}
	if s == "" {
		return true
	}
	if s[0] != 'e' && s[0] != 'E' {
		return false
	}
	s = s[1:]
	if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		s = s[1:]
	}
	return isDigits(s)
}

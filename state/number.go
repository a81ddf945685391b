package state

import (
	"math/bits"
	"strings"
)

// integral is a JSON number read exactly as an integer.
type integral struct {
	neg   bool   // below zero (never for zero: -0.0 is 0)
	mag   uint64 // the magnitude, unless huge
	huge  bool   // the magnitude is 2^64 or more
	plain bool   // the text is the integer's own decimal form: "3", not "3.0", "3e0" or "-0"
}

// maxExp bounds the exponents parseIntegral works with: any larger one
// makes a number huge or a fraction whatever its digits (a line holds at
// most a few million of them), and bounding it keeps the sums in int64.
const maxExp = 1 << 40

// parseIntegral reads the JSON number s exactly, without going through a
// float: 3, 3.0, 3e0, 30e-1 and 0.3e1 are the integer 3; -0.0 is 0; 1e400
// is a huge integer. It reports false when s is not an integer (1.5, 1e-400)
// or not a JSON number. It allocates nothing and takes time linear in s.
func parseIntegral(s string) (n integral, ok bool) {
	sign := strings.HasPrefix(s, "-")
	if sign {
		s = s[1:]
	}
	plain := true
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, ok := parseExponent(s[i+1:])
		if !ok {
			return n, false
		}
		mant, exp, plain = s[:i], e, false
	}
	whole, frac, dot := strings.Cut(mant, ".")
	if !isDigits(whole) || len(whole) > 1 && whole[0] == '0' || dot && !isDigits(frac) {
		return n, false // JSON has no "007", ".5" or "5."
	}
	if dot {
		plain = false
	}
	// The value is the digits of whole and frac times 10^(exp-len(frac)).
	digit := func(i int) byte {
		if i < len(whole) {
			return whole[i] - '0'
		}
		return frac[i-len(whole)] - '0'
	}
	count := len(whole) + len(frac)
	first, last := -1, -1
	for i := 0; i < count; i++ {
		if digit(i) != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 { // zero, however written
		return integral{plain: plain && !sign}, true
	}
	exp += int64(count-1-last) - int64(len(frac)) // trailing zeros count as exponent
	if exp < 0 {
		return n, false // a fraction: the last significant digit is past the point
	}
	n.neg, n.plain = sign, plain
	if int64(last-first+1)+exp > 20 { // more than 20 digits: at least 10^20 > 2^64
		n.huge = true
		return n, true
	}
	for i := first; i <= last; i++ {
		n.mag, n.huge = mulAdd(n.mag, uint64(digit(i)), n.huge)
	}
	for ; exp > 0; exp-- {
		n.mag, n.huge = mulAdd(n.mag, 0, n.huge)
	}
	return n, true
}

// mulAdd returns m*10 + d, and whether it (or an earlier step: over) went
// past 2^64-1.
func mulAdd(m, d uint64, over bool) (uint64, bool) {
	hi, lo := bits.Mul64(m, 10)
	sum, carry := bits.Add64(lo, d, 0)
	return sum, over || hi != 0 || carry != 0
}

// parseExponent reads an exponent's optional sign and digits, bounded to
// ±maxExp.
func parseExponent(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	if !isDigits(s) {
		return 0, false
	}
	var e int64
	for i := 0; i < len(s); i++ {
		if e = e*10 + int64(s[i]-'0'); e > maxExp {
			e = maxExp
		}
	}
	if neg {
		e = -e
	}
	return e, true
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// in returns n as an int64 when it is within [min, max].
func (n integral) in(min, max int64) (int64, bool) {
	switch {
	case n.huge:
		return 0, false
	case n.neg:
		// -mag >= min, written so that min = math.MinInt64 does not overflow.
		if min >= 0 || n.mag > uint64(-(min+1))+1 {
			return 0, false
		}
		return -int64(n.mag-1) - 1, true
	case max < 0 || n.mag > uint64(max) || min > 0 && n.mag < uint64(min):
		return 0, false
	}
	return int64(n.mag), true
}

// uint returns n as a uint64 when it is not negative and not huge.
func (n integral) uint() (uint64, bool) {
	return n.mag, !n.neg && !n.huge
}

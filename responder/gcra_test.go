package responder

import "testing"

// TestGCRANumbers: the costs both paths use, rounded up, and the fixed-point
// cost never below the exact ns << 16 (an undercharge would let a source
// past its budget) and at most one unit above it.
func TestGCRANumbers(t *testing.T) {
	for _, tc := range []struct {
		rate      float64
		burst     int
		cost1     int64
		tolerance int64
	}{
		{256 << 10, 64 << 10, 3815, 250_000_000}, // the default per-IP budget: 1e9/262144 = 3814.7 ns a byte
		{1 << 20, 64 << 10, 954, 62_500_000},     // the default unproven budget
		{2, 4, 500_000_000, 2_000_000_000},       // a packet rate: 2 requests/s, 4 at once
		{1e9, 1500, 1, 1500},
		{3, 1, 333_333_334, 333_333_334},
	} {
		g := NewGCRA(tc.rate, tc.burst)
		if got := g.Cost(1); got != tc.cost1 {
			t.Errorf("rate %v: Cost(1) = %d, want %d", tc.rate, got, tc.cost1)
		}
		if got := g.Tolerance(); got != tc.tolerance {
			t.Errorf("rate %v burst %d: Tolerance = %d, want %d", tc.rate, tc.burst, got, tc.tolerance)
		}
	}
	for rate := uint64(1); rate < 1<<31; rate = rate*3 + 7 {
		exact := (uint64(1e9)<<16 + rate - 1) / rate
		if got := NewGCRA(float64(rate), 1).CostQ16(); got < exact || got > exact+1 {
			t.Errorf("rate %d: CostQ16 = %d, want %d (or one more)", rate, got, exact)
		}
	}
}

// TestSplitBudget: every share is the rate divided (at least 1 byte/s) and
// the burst divided but at least one datagram.
func TestSplitBudget(t *testing.T) {
	for _, tc := range []struct{ rate, burst, n, wantRate, wantBurst int }{
		{1 << 20, 64 << 10, 2, 1 << 19, 32 << 10},
		{1 << 20, 64 << 10, 1, 1 << 20, 64 << 10},
		{1 << 20, 64 << 10, 0, 1 << 20, 64 << 10}, // no sharers: the whole budget
		{1 << 20, 4000, 4, 1 << 18, 1500},         // the burst never below a datagram
		{3, 1500, 4, 1, 1500},                     // the rate never 0
	} {
		r, b := SplitBudget(tc.rate, tc.burst, tc.n)
		if r != tc.wantRate || b != tc.wantBurst {
			t.Errorf("SplitBudget(%d, %d, %d) = %d, %d; want %d, %d", tc.rate, tc.burst, tc.n, r, b, tc.wantRate, tc.wantBurst)
		}
	}
}

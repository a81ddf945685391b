package responder

import "math"

// GCRA is the arithmetic of a token bucket of burst tokens refilled at rate
// tokens per second, kept as one time per bucket (the generic cell rate
// algorithm): n tokens cost n/rate, and a bucket's time may run at most one
// burst's cost ahead of now. The socket path's buckets (buckets.go) and the
// fast path's program (package xdp writes CostQ16, Cost and Tolerance into
// its config) both take their numbers from here, so that a rate is turned
// into time in one place.
type GCRA struct {
	perToken float64 // ns per token: 1e9 / rate
	depth    int64   // ns: what burst tokens cost
}

// NewGCRA returns the arithmetic of rate tokens per second and burst
// tokens. The callers validate them: rate positive and finite, burst at
// least 1.
func NewGCRA(rate float64, burst int) GCRA {
	g := GCRA{perToken: 1e9 / rate}
	g.depth = g.Cost(burst)
	return g
}

// Cost is what n tokens cost, in nanoseconds, rounded up.
func (g GCRA) Cost(n int) int64 {
	return int64(math.Ceil(float64(n) * g.perToken))
}

// CostQ16 is what one token costs in nanoseconds << 16, rounded up: the
// fixed-point form the fast path multiplies by instead of dividing per
// frame (n tokens then cost at most n/65536 + 1 ns more than Cost(n)).
func (g GCRA) CostQ16() uint64 {
	return uint64(math.Ceil(g.perToken * 65536))
}

// Tolerance is what a full burst costs, in nanoseconds: how far ahead of
// now a bucket's time may run.
func (g GCRA) Tolerance() int64 { return g.depth }

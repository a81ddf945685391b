package responder

import (
	"fmt"
	"time"

	"golang.org/x/time/rate"
)

// Limits are the byte budgets that keep queryd from being an amplifier.
type Limits struct {
	PerIPRate     int // reply bytes per second to one IPv4 address or IPv6 /64
	PerIPBurst    int // bytes one source may draw at once
	UnprovenRate  int // reply bytes per second to all unproven sources together
	UnprovenBurst int
	TrackedIPs    int // sources whose budgets are remembered (LRU); bounds memory
	// UnprovenPacketRate is the proven-source tier's gate: the requests per
	// second from sources that have not proven their address (challenges
	// included) answered at all, all of them together (0: no gate); while
	// it is spent such a request is shed before any reply work, counted
	// "unproven_shed" (gate.go).
	UnprovenPacketRate  int
	UnprovenPacketBurst int // requests the gate lets through at once
	// ProvenFor is how long a source stays proven after queryd answered a
	// valid challenge token from it (0: never remembered).
	ProvenFor time.Duration
}

// DefaultLimits are the budgets used when the config sets none.
var DefaultLimits = Limits{
	PerIPRate:     256 << 10,
	PerIPBurst:    64 << 10,
	UnprovenRate:  1 << 20,
	UnprovenBurst: 64 << 10,
	TrackedIPs:    65536,

	UnprovenPacketRate:  20000,
	UnprovenPacketBurst: 2000,
	ProvenFor:           10 * time.Minute,
}

// Validate reports the first budget that cannot work.
func (l Limits) Validate() error {
	switch {
	case l.PerIPRate <= 0:
		return fmt.Errorf("per-IP rate must be positive, got %d", l.PerIPRate)
	case l.PerIPBurst < 1500:
		return fmt.Errorf("per-IP burst must be at least 1500 bytes (one datagram), got %d", l.PerIPBurst)
	case l.UnprovenRate <= 0:
		return fmt.Errorf("unproven rate must be positive, got %d", l.UnprovenRate)
	case l.UnprovenBurst < 1500:
		return fmt.Errorf("unproven burst must be at least 1500 bytes, got %d", l.UnprovenBurst)
	case l.TrackedIPs < 16:
		return fmt.Errorf("tracked IPs must be at least 16, got %d", l.TrackedIPs)
	case l.UnprovenPacketRate < 0:
		return fmt.Errorf("unproven packet rate must not be negative, got %d", l.UnprovenPacketRate)
	case l.UnprovenPacketRate > 0 && l.UnprovenPacketBurst < 1:
		return fmt.Errorf("unproven packet burst must be at least 1, got %d", l.UnprovenPacketBurst)
	case l.ProvenFor < 0:
		return fmt.Errorf("proven_for must not be negative, got %v", l.ProvenFor)
	}
	return nil
}

// SplitBudget is one of n equal shares of a budget of rate bytes/s and
// burst bytes: the rate divided (at least 1 byte/s), the burst divided but
// never below one datagram (1,500 bytes). Every split of a budget is this
// one: the unproven budget among the receive loops here and among the CPUs
// in the fast path, and each budget between the two paths (package daemon).
func SplitBudget(rate, burst, n int) (int, int) {
	n = max(n, 1)
	return max(rate/n, 1), max(burst/n, 1500)
}

// SplitPackets is one of n equal shares of a packet budget of rate
// requests/s and burst requests (the unproven packet gate's): the rate
// divided (at least 1), the burst divided (at least 1); a rate of 0 (no
// gate) stays 0. It is SplitBudget without the one-datagram floor, which
// only byte budgets need.
func SplitPackets(rate, burst, n int) (int, int) {
	if rate <= 0 {
		return 0, 0
	}
	n = max(n, 1)
	return max(rate/n, 1), max(burst/n, 1)
}

// limiter applies the per-IP and the unproven budgets.
type limiter struct {
	lim   Limits
	perIP *sourceBuckets // reply bytes per source (buckets.go)
	// unproven is the global unproven budget split evenly among the receive
	// loops, so that loops on different cores never wait for one lock. Each
	// share is drawn on by its own loop only, with that loop's batch times,
	// which never go back.
	unproven      []*rate.Limiter
	unprovenBurst int // each share's burst (asking the Limiter takes its lock)
	// gate is the unproven packet gate split evenly among the receive loops
	// like unproven (gate.go); nil: no gate.
	gate []*rate.Limiter
}

// newLimiter makes the budgets for loops receive loops.
func newLimiter(l Limits, loops int) (*limiter, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	perIP, err := newSourceBuckets(rate.Limit(l.PerIPRate), l.PerIPBurst, l.TrackedIPs)
	if err != nil {
		return nil, fmt.Errorf("per-IP budget: %w", err)
	}
	loops = max(loops, 1)
	share, burst := SplitBudget(l.UnprovenRate, l.UnprovenBurst, loops)
	lim := &limiter{lim: l, perIP: perIP, unprovenBurst: burst}
	for i := 0; i < loops; i++ {
		lim.unproven = append(lim.unproven, rate.NewLimiter(rate.Limit(share), burst))
	}
	if pr, pb := SplitPackets(l.UnprovenPacketRate, l.UnprovenPacketBurst, loops); pr > 0 {
		for i := 0; i < loops; i++ {
			lim.gate = append(lim.gate, rate.NewLimiter(rate.Limit(pr), pb))
		}
	}
	return lim, nil
}

// allowed is what limiter.allow returns for a reply every budget allows.
const allowed = -1

// allow reports whether n reply bytes may go to source k now, and takes
// them from the budgets if so, in this order: the server's per-IP budget
// always, then the host-wide per-IP budget host (nil: none), then receive
// loop loop's share of the global unproven budget unless exempt (a proven
// source, or a reply no larger than its request). It returns allowed, or
// the outcome of the budget that refused: outRateLimited (the server's
// per-IP or unproven budget) or outHostLimited. The budgets passed before
// the one that refused keep what was taken (a refusal only ever leaves
// less to send).
// A reply larger than a burst takes the whole burst.
func (l *limiter) allow(k ipKey, n int, exempt bool, now time.Time, loop int, host *hostBuckets) int {
	if !l.perIP.allowN(k, min(n, l.lim.PerIPBurst), now) {
		return outRateLimited
	}
	if !host.allow(k, n, now) {
		return outHostLimited
	}
	if exempt || l.unproven[loop%len(l.unproven)].AllowN(now, min(n, l.unprovenBurst)) {
		return allowed
	}
	return outRateLimited
}

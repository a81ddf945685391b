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
}

// DefaultLimits are the budgets used when the config sets none.
var DefaultLimits = Limits{
	PerIPRate:     256 << 10,
	PerIPBurst:    64 << 10,
	UnprovenRate:  1 << 20,
	UnprovenBurst: 64 << 10,
	TrackedIPs:    65536,
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

package responder

import (
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// HostLimits is the host-wide per-IP budget: the reply bytes every Server
// of one process together may send one source (an IPv4 address or IPv6
// /64), on top of each server's own per-IP budget (Limits). Without it a
// host of n servers sends one victim n times a server's PerIPRate.
type HostLimits struct {
	PerIPRate  int // reply bytes per second to one source, every server together
	PerIPBurst int // bytes one source may draw at once, every server together
	TrackedIPs int // sources whose budgets are remembered; bounds memory (16 B each)
}

// HostFactor is how many times a server's per-IP budget the host-wide one
// is when the config sets none (DefaultHostLimits).
const HostFactor = 4

// DefaultHostLimits is the host-wide budget derived from a server's
// per-IP budget l: HostFactor times its rate and burst, as many sources
// tracked.
func DefaultHostLimits(l Limits) HostLimits {
	if l == (Limits{}) {
		l = DefaultLimits
	}
	return HostLimits{PerIPRate: HostFactor * l.PerIPRate, PerIPBurst: HostFactor * l.PerIPBurst, TrackedIPs: l.TrackedIPs}
}

// Validate reports the first value that cannot work.
func (l HostLimits) Validate() error {
	switch {
	case l.PerIPRate <= 0:
		return fmt.Errorf("host-wide per-IP rate must be positive, got %d", l.PerIPRate)
	case l.PerIPBurst < 1500:
		return fmt.Errorf("host-wide per-IP burst must be at least 1500 bytes (one datagram), got %d", l.PerIPBurst)
	case l.TrackedIPs < 16:
		return fmt.Errorf("host-wide tracked IPs must be at least 16, got %d", l.TrackedIPs)
	}
	return nil
}

// Share is one of n equal shares of l (SplitBudget): the socket path's
// and the fast path's while both answer for the host.
func (l HostLimits) Share(n int) HostLimits {
	l.PerIPRate, l.PerIPBurst = SplitBudget(l.PerIPRate, l.PerIPBurst, n)
	return l
}

// GCRA is the budget's arithmetic (a reply's bytes are its tokens), for
// the fast path's program: it takes CostQ16 and Tolerance of its share.
func (l HostLimits) GCRA() GCRA { return NewGCRA(float64(l.PerIPRate), l.PerIPBurst) }

// HostBudget is the host-wide per-IP budget of one process, shared by
// every Server (Config.Host): a token bucket per source in the same
// bounded table as a server's per-IP budget (buckets.go), at most
// TrackedIPs sources, drawn on after the server's own per-IP budget has
// allowed a reply. A nil *HostBudget allows everything.
type HostBudget struct {
	cur atomic.Pointer[hostBuckets]
}

// hostBuckets are a HostBudget's limits with their buckets, swapped whole.
type hostBuckets struct {
	lim     HostLimits
	buckets *sourceBuckets
}

// NewHostBudget makes the host-wide budget of l.
func NewHostBudget(l HostLimits) (*HostBudget, error) {
	h := &HostBudget{}
	if err := h.SetLimits(l); err != nil {
		return nil, err
	}
	return h, nil
}

// SetLimits replaces the budget (on reload, or when the fast path takes
// its share); the per-source state starts afresh, unless l is the budget
// already in force (kept as it is).
func (h *HostBudget) SetLimits(l HostLimits) error {
	if err := l.Validate(); err != nil {
		return fmt.Errorf("host-wide budget: %w", err)
	}
	if cur := h.cur.Load(); cur != nil && cur.lim == l {
		return nil
	}
	b, err := newSourceBuckets(rate.Limit(l.PerIPRate), l.PerIPBurst, l.TrackedIPs)
	if err != nil {
		return fmt.Errorf("host-wide budget: %w", err)
	}
	h.cur.Store(&hostBuckets{lim: l, buckets: b})
	return nil
}

// Limits returns the budget in force (the zero HostLimits for a nil h).
func (h *HostBudget) Limits() HostLimits {
	if h == nil {
		return HostLimits{}
	}
	return h.cur.Load().lim
}

// load returns the buckets in force (nil for a nil h): a receive loop
// loads them once per batch.
func (h *HostBudget) load() *hostBuckets {
	if h == nil {
		return nil
	}
	return h.cur.Load()
}

// allow reports whether n reply bytes may go to source k now, and takes
// them if so; a reply larger than the burst takes the whole burst. Nil
// buckets allow everything.
func (hb *hostBuckets) allow(k ipKey, n int, now time.Time) bool {
	if hb == nil {
		return true
	}
	return hb.buckets.allowN(k, min(n, hb.lim.PerIPBurst), now)
}

package responder

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
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

// ipKey is a source as the per-IP budget sees it: an IPv4 address, or the /64
// of an IPv6 address (one subscriber usually holds a whole /64).
type ipKey [16]byte

func keyOf(ip netip.Addr) ipKey {
	ip = ip.Unmap()
	k := ipKey(ip.As16())
	if ip.Is6() {
		clear(k[8:])
	}
	return k
}

// shards splits the per-IP cache so that receive loops on different cores
// rarely wait for the same lock.
const shards = 16

// limiter applies the per-IP and the unproven budgets.
type limiter struct {
	lim   Limits
	perIP [shards]*lru.Cache[ipKey, *ipBudget]
	// unproven is the global unproven budget split evenly among the receive
	// loops, so that loops on different cores never wait for one lock.
	unproven      []*rate.Limiter
	unprovenBurst int // each share's burst (asking the Limiter takes its lock)
}

// newLimiter makes the budgets for loops receive loops.
func newLimiter(l Limits, loops int) (*limiter, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	loops = max(loops, 1)
	lim := &limiter{lim: l, unprovenBurst: max(l.UnprovenBurst/loops, 1500)}
	for i := 0; i < loops; i++ {
		lim.unproven = append(lim.unproven, rate.NewLimiter(rate.Limit(l.UnprovenRate/loops), lim.unprovenBurst))
	}
	for i := range lim.perIP {
		c, err := lru.New[ipKey, *ipBudget](max(l.TrackedIPs/shards, 1))
		if err != nil {
			return nil, fmt.Errorf("per-IP cache: %w", err)
		}
		lim.perIP[i] = c
	}
	return lim, nil
}

func (k ipKey) shard() int {
	h := binary.LittleEndian.Uint64(k[:8]) ^ binary.LittleEndian.Uint64(k[8:])
	return int((h * 0x9E3779B97F4A7C15) >> 60)
}

// allow reports whether n reply bytes may go to source k now, and takes them from
// the budgets if so: the per-IP budget always, receive loop loop's share of
// the global unproven budget unless exempt (a proven source, or a reply no
// larger than its request).
// A reply larger than a burst takes the whole burst.
func (l *limiter) allow(k ipKey, n int, exempt bool, now time.Time, loop int) bool {
	c := l.perIP[k.shard()]
	b, ok := c.Get(k)
	if !ok {
		b = &ipBudget{lim: rate.NewLimiter(rate.Limit(l.lim.PerIPRate), l.lim.PerIPBurst)}
		c.Add(k, b)
	}
	if !b.lim.AllowN(b.monotonic(now), min(n, l.lim.PerIPBurst)) {
		return false
	}
	if exempt {
		return true
	}
	return l.unproven[loop%len(l.unproven)].AllowN(now, min(n, l.unprovenBurst))
}

// ipBudget is one source's byte budget. Receive loops on several cores share
// it, each with the time its batch began; handing a rate.Limiter a time older
// than one it has seen moves its clock back and credits the interval twice,
// so the times are made monotonic first.
type ipBudget struct {
	last atomic.Int64 // the latest time handed to lim, in unix nanoseconds
	lim  *rate.Limiter
}

// monotonic returns now, or the latest time already used if that is later.
func (b *ipBudget) monotonic(now time.Time) time.Time {
	t := now.UnixNano()
	for {
		last := b.last.Load()
		if t <= last {
			return time.Unix(0, last)
		}
		if b.last.CompareAndSwap(last, t) {
			return now
		}
	}
}

// tracked returns how many sources the per-IP cache holds.
func (l *limiter) tracked() int {
	n := 0
	for _, c := range l.perIP {
		n += c.Len()
	}
	return n
}

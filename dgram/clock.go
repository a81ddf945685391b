package dgram

import (
	"sync/atomic"
	"time"
)

// Clock is a coarse clock that the responder sets once per receive batch, so
// that handlers and the challenge issuer read the time with one atomic load
// instead of asking the kernel per datagram (time.Now costs 150 ns or more
// in some virtual machines). It is meant for code that runs inside a batch;
// before the first Set, Now falls back to time.Now.
type Clock struct {
	ns atomic.Int64
}

// Set records t as the current time.
func (c *Clock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

// Now returns the last time Set recorded. A nil Clock is the system clock.
func (c *Clock) Now() time.Time {
	if c == nil {
		return time.Now()
	}
	if ns := c.ns.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Now()
}

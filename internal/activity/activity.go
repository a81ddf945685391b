// Package activity records when a source of a server's state (the feed,
// the [upstream] game server, Agones) last spoke, and since when it has
// spoken without a gap longer than its stale_after: the times the daemon's
// one liveness value (daemon/silence.go) is made of. It is safe for
// concurrent use and allocates nothing.
package activity

import (
	"sync/atomic"
	"time"
)

// Clock is one source's record. The zero value has never spoken.
type Clock struct {
	last  atomic.Int64 // unix nanoseconds of the last time it spoke; 0: never
	since atomic.Int64 // unix nanoseconds of the start of its current run
}

// Note records that the source spoke at now. With after > 0, a gap longer
// than after since the last time (or a first time) starts a new run.
func (c *Clock) Note(now time.Time, after time.Duration) {
	n := now.UnixNano()
	prev := c.last.Swap(n)
	if prev == 0 || after > 0 && n-prev > int64(after) {
		c.since.Store(n)
	}
}

// Last is when the source last spoke (zero: never).
func (c *Clock) Last() time.Time { return unixTime(c.last.Load()) }

// Since is when the source's current run began: its first time, or its
// first time after a gap longer than after (zero: never spoke).
func (c *Clock) Since() time.Time { return unixTime(c.since.Load()) }

// Quiet reports whether the source has spoken and then been quiet for
// longer than after at now (after <= 0: never).
func (c *Clock) Quiet(now time.Time, after time.Duration) bool {
	last := c.last.Load()
	return after > 0 && last != 0 && now.UnixNano()-last > int64(after)
}

func unixTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

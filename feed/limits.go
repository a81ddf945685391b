package feed

import (
	"sync/atomic"
	"time"
)

// Defaults of the feed's limits (Config fields left zero).
const (
	DefaultMaxConns    = 64
	DefaultMaxBuffered = 16 << 20
	DefaultLineTimeout = 10 * time.Second
)

// Reasons a feed connection is closed by queryd, as reported by Stats.
const (
	DropMaxConns    = "max_conns"     // over Config.MaxConns: refused at once
	DropMaxBuffered = "max_buffered"  // its line would pass Config.MaxBuffered
	DropLineTimeout = "line_timeout"  // a line (or a reply) not completed within Config.LineTimeout
	DropLineTooLong = "line_too_long" // a line over MaxLine
)

// DropReasons lists every reason of Stats.Dropped.
var DropReasons = []string{DropMaxConns, DropMaxBuffered, DropLineTimeout, DropLineTooLong}

// Stats is what the feed holds and has refused.
type Stats struct {
	Open       int               // connections open
	Buffered   int64             // bytes of unfinished lines beyond the base read buffers
	Dropped    map[string]uint64 // connections closed by queryd, by reason
	AcceptWait uint64            // accepts that failed for want of a resource and were retried
}

// budget is a number of bytes shared by all connections.
type budget struct {
	max  int64
	held atomic.Int64
}

// take reserves n bytes; false when that would pass max.
func (b *budget) take(n int64) bool {
	for {
		h := b.held.Load()
		if h+n > b.max {
			return false
		}
		if b.held.CompareAndSwap(h, h+n) {
			return true
		}
	}
}

// give returns n bytes taken before.
func (b *budget) give(n int64) { b.held.Add(-n) }

// drops counts connections closed by queryd, by reason.
type drops struct {
	maxConns, maxBuffered, lineTimeout, lineTooLong atomic.Uint64
}

func (d *drops) counter(reason string) *atomic.Uint64 {
	switch reason {
	case DropMaxConns:
		return &d.maxConns
	case DropMaxBuffered:
		return &d.maxBuffered
	case DropLineTimeout:
		return &d.lineTimeout
	}
	return &d.lineTooLong
}

func (d *drops) snapshot() map[string]uint64 {
	m := make(map[string]uint64, len(DropReasons))
	for _, r := range DropReasons {
		m[r] = d.counter(r).Load()
	}
	return m
}

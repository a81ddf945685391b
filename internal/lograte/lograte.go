// Package lograte bounds the lines a log may take per second, so that a
// flood of datagrams cannot fill the disk through queryd's per-datagram
// debug logs (relay mode, unclaimed datagrams). The lines refused are
// counted, and the next line allowed says how many there were.
package lograte

import (
	"sync/atomic"

	"golang.org/x/time/rate"
)

// Limiter is a token bucket of log lines: perSecond lines a second after a
// burst. It is safe for concurrent use and does not allocate.
type Limiter struct {
	bucket     *rate.Limiter
	suppressed atomic.Int64
}

// New makes a limiter of perSecond lines a second after a burst of burst.
func New(perSecond float64, burst int) *Limiter {
	return &Limiter{bucket: rate.NewLimiter(rate.Limit(perSecond), burst)}
}

// Allow reports whether a line may be logged now and, when it may, how
// many lines were refused since the last one allowed (to be logged as
// suppressed, then forgotten).
func (l *Limiter) Allow() (ok bool, suppressed int64) {
	if !l.bucket.Allow() {
		l.suppressed.Add(1)
		return false, 0
	}
	return true, l.suppressed.Swap(0)
}

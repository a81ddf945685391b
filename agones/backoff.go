package agones

import (
	"math/rand/v2"
	"time"
)

// The watch stream's back-off between two attempts to open it: from
// minBackoff, doubling after each attempt that brought no GameServer, to
// maxBackoff; each wait is drawn between half of that and all of it, so
// that the sidecars of one node restarting together are not asked in step.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// backoff is the watch stream's back-off; the zero value starts at
// minBackoff.
type backoff struct{ n uint }

// next returns the wait before the next attempt and moves on.
func (b *backoff) next() time.Duration {
	d := min(minBackoff<<b.n, maxBackoff)
	if d < maxBackoff {
		b.n++
	}
	return d/2 + rand.N(d/2+1)
}

// reset starts over at minBackoff.
func (b *backoff) reset() { b.n = 0 }

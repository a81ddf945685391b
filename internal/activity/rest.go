package activity

import (
	"sync/atomic"
	"time"
)

// Rest is a server's rest ([sleep], package sleep): while its game server
// is stopped on purpose, or being stopped or woken, none of the server's
// sources is stale, and once it is awake again their quiet counts from
// the wake, not from their last word before the rest ("silence rules
// apply again from the wake"). The feed, the [upstream] poller and the
// daemon's liveness value all read it; package sleep writes it. A nil
// *Rest is a server that never rests. It is safe for concurrent use and
// allocates nothing.
type Rest struct {
	phase atomic.Int32 // restAwake, restDown or restWaking
	since atomic.Int64 // unix nanoseconds: when the current rest began; 0 while awake
	woke  atomic.Int64 // unix nanoseconds: when the last rest ended; 0: never rested
}

const (
	restAwake  = iota // the game server runs
	restDown          // it is being stopped, or is stopped: nothing to ask
	restWaking        // it is being started: ask it, it may answer
)

// Down marks the start of a rest at now (its game server being stopped),
// or its return to the stopped state after a wake that failed (the rest
// goes on: since is kept).
func (r *Rest) Down(now time.Time) {
	r.since.CompareAndSwap(0, now.UnixNano())
	r.phase.Store(restDown)
}

// Waking marks a wake in progress: the game server is being started.
func (r *Rest) Waking() { r.phase.Store(restWaking) }

// Woke ends the rest at now: the game server runs again.
func (r *Rest) Woke(now time.Time) {
	r.woke.Store(now.UnixNano())
	r.phase.Store(restAwake)
	r.since.Store(0)
}

// Resting reports whether the server is at rest: its game server stopped,
// being stopped, or being woken. While it is, no source is stale.
func (r *Rest) Resting() bool { return r != nil && r.phase.Load() != restAwake }

// IsDown reports whether the game server is stopped or being stopped (not
// being woken): nothing is there to ask.
func (r *Rest) IsDown() bool { return r != nil && r.phase.Load() == restDown }

// Since is when the current rest began (zero while awake).
func (r *Rest) Since() time.Time {
	if r == nil {
		return time.Time{}
	}
	return unixTime(r.since.Load())
}

// From is when a source that last spoke at last counts its quiet from:
// last, or the end of the last rest if that came later (zero when the
// source never spoke).
func (r *Rest) From(last time.Time) time.Time {
	if r == nil || last.IsZero() {
		return last
	}
	if w := r.woke.Load(); w > last.UnixNano() {
		return time.Unix(0, w)
	}
	return last
}

// Quiet reports whether a source that last spoke at last is quiet at now
// for longer than after: never while the server rests, and counted from
// From(last) (after <= 0, or a source that never spoke: never).
func (r *Rest) Quiet(last, now time.Time, after time.Duration) bool {
	if after <= 0 || last.IsZero() || r.Resting() {
		return false
	}
	return now.Sub(r.From(last)) > after
}

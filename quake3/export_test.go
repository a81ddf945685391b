package quake3

import (
	"testing"
	"time"
)

// What the daemon tests (package quake3_test) may change of the module's
// unexported parts.

// SetProbeTiming makes the heartbeat services started during t probe the
// game server attempts times, waiting timeout each, every every; restored
// when t ends.
func SetProbeTiming(t testing.TB, attempts int, timeout, every time.Duration) {
	old := defaultProbe
	defaultProbe = probeTiming{attempts: attempts, timeout: timeout, every: every}
	t.Cleanup(func() { defaultProbe = old })
}

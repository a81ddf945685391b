package daemon

import (
	"testing"

	"github.com/queryd/queryd/responder"
)

// TestShareLimits: while the fast path is attached each path gets half of
// [limits], a burst never below one datagram.
func TestShareLimits(t *testing.T) {
	for _, c := range []struct {
		name    string
		in, out responder.Limits
	}{
		{"defaults", responder.DefaultLimits, responder.Limits{PerIPRate: 128 << 10, PerIPBurst: 32 << 10, UnprovenRate: 512 << 10, UnprovenBurst: 32 << 10, TrackedIPs: 65536}},
		{"unset", responder.Limits{}, responder.Limits{PerIPRate: 128 << 10, PerIPBurst: 32 << 10, UnprovenRate: 512 << 10, UnprovenBurst: 32 << 10, TrackedIPs: 65536}},
		{"small bursts", responder.Limits{PerIPRate: 2048, PerIPBurst: 1500, UnprovenRate: 8192, UnprovenBurst: 3000, TrackedIPs: 16},
			responder.Limits{PerIPRate: 1024, PerIPBurst: 1500, UnprovenRate: 4096, UnprovenBurst: 1500, TrackedIPs: 16}},
		{"rate 1", responder.Limits{PerIPRate: 1, PerIPBurst: 1500, UnprovenRate: 1, UnprovenBurst: 1500, TrackedIPs: 16},
			responder.Limits{PerIPRate: 1, PerIPBurst: 1500, UnprovenRate: 1, UnprovenBurst: 1500, TrackedIPs: 16}},
	} {
		got := shareLimits(c.in)
		if got != c.out {
			t.Errorf("%s: shareLimits(%+v) = %+v, want %+v", c.name, c.in, got, c.out)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

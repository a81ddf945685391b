package daemon

import (
	"testing"
	"time"

	"github.com/queryd/queryd/responder"
)

// halfDefaults is each path's half of the default [limits]: the byte
// budgets and the proven-source tier's gate halved, proven_for whole.
var halfDefaults = responder.Limits{PerIPRate: 128 << 10, PerIPBurst: 32 << 10, UnprovenRate: 512 << 10, UnprovenBurst: 32 << 10, TrackedIPs: 65536,
	UnprovenPacketRate: 10000, UnprovenPacketBurst: 1000, ProvenFor: 10 * time.Minute}

// TestShareLimits: while the fast path is attached each path gets half of
// [limits], a byte burst never below one datagram, a packet burst never
// below one request.
func TestShareLimits(t *testing.T) {
	for _, c := range []struct {
		name    string
		in, out responder.Limits
	}{
		{"defaults", responder.DefaultLimits, halfDefaults},
		{"unset", responder.Limits{}, halfDefaults},
		{"proven tier", responder.Limits{PerIPRate: 2048, PerIPBurst: 1500, UnprovenRate: 8192, UnprovenBurst: 3000, TrackedIPs: 16, UnprovenPacketRate: 3, UnprovenPacketBurst: 1, ProvenFor: 1},
			responder.Limits{PerIPRate: 1024, PerIPBurst: 1500, UnprovenRate: 4096, UnprovenBurst: 1500, TrackedIPs: 16, UnprovenPacketRate: 1, UnprovenPacketBurst: 1, ProvenFor: 1}},
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

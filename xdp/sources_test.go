//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"net/netip"
	"testing"

	"github.com/queryd/queryd/responder"
)

// TestSourceCountOf: a sources map entry becomes the status page's source
// as the socket path names it (an IPv4-mapped key the /32, any other the
// /64), the program's outcomes on responder.SourceOutcomes' (answered
// without a token joins answered).
func TestSourceCountOf(t *testing.T) {
	var v querydSourceCount
	v.N[querydOutcomeOUT_ANSWERED] = 1
	v.N[querydOutcomeOUT_OPEN] = 2
	v.N[querydOutcomeOUT_CHALLENGED] = 4
	v.N[querydOutcomeOUT_RATE_LIMITED] = 8
	v.N[querydOutcomeOUT_STALE] = 16
	v.N[querydOutcomeOUT_DENIED] = 32
	want := map[string]uint64{"answered": 3, "challenged": 4, "rate_limited": 8, "stale": 16, "denied": 32}
	for key, prefix := range map[netip.Addr]string{
		netip.MustParseAddr("::ffff:198.18.0.2"): "198.18.0.2/32",
		netip.MustParseAddr("fd00:5164:7864::"):  "fd00:5164:7864::/64",
	} {
		sc := sourceCountOf(querydIpkey{B: key.As16()}, v.N[:])
		if sc.Source.String() != prefix || sc.Requests != 63 {
			t.Errorf("%s: %s with %d requests, want %s with 63", key, sc.Source, sc.Requests, prefix)
		}
		for i, label := range responder.SourceOutcomes {
			if sc.Outcomes[i] != want[label] {
				t.Errorf("%s: %s %d, want %d", key, label, sc.Outcomes[i], want[label])
			}
		}
	}
}

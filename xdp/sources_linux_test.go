//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/queryd/queryd/responder"
)

// TestXDPSources: the program counts what it answers or drops per source
// (IPv4 address, IPv6 /64) with the outcomes; DrainSources hands the
// counts over once and forgets them. 200 A2S_INFO from one address and 20
// from an IPv6 one, all challenged in the program.
func TestXDPSources(t *testing.T) {
	fx := newFixture(t, responder.Limits{PerIPRate: 1 << 30, PerIPBurst: 1 << 20, UnprovenRate: 1 << 30, UnprovenBurst: 1 << 20, TrackedIPs: 1024})
	fx.fp.DrainSources(nil) // start from an empty map
	for _, s := range []struct {
		src netip.Addr
		dst netip.Addr
		n   int
	}{{cliAddr4, srvAddr4, 200}, {cliAddr6, srvAddr6, 20}} {
		c := fx.dial(t, s.src, s.dst)
		for i := 0; i < s.n; i++ {
			if r := c.ask(t, a2sInfo, time.Second); len(r) != 9 {
				t.Fatalf("A2S_INFO %d from %s: % x", i, s.src, r)
			}
		}
	}
	got := fx.fp.DrainSources(nil)
	slices.SortFunc(got, func(a, b responder.SourceCount) int { return int(b.Requests) - int(a.Requests) })
	challenged := slices.Index(responder.SourceOutcomes[:], "challenged")
	want := []struct {
		prefix string
		n      uint64
	}{{"198.18.0.2/32", 200}, {"fd00:5164:7864::/64", 20}}
	if len(got) != len(want) {
		t.Fatalf("drained %+v, want %v", got, want)
	}
	for i, w := range want {
		if got[i].Source.String() != w.prefix || got[i].Requests != w.n || got[i].Outcomes[challenged] != w.n {
			t.Errorf("source %d: %+v, want %s with %d challenged", i, got[i], w.prefix, w.n)
		}
	}
	if again := fx.fp.DrainSources(nil); len(again) != 0 {
		t.Fatalf("a second drain: %+v, want nothing", again)
	}
}

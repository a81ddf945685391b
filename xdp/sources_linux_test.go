//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"fmt"
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

// TestXDPSourcesPeriods: a source with a budget entry is counted in it,
// one drain period into one half while the drain reads the other; each
// drain hands over exactly its period's requests, also when a half is
// used again (the third period), and a source dropped before any reply
// (denied: no budget entry) comes from the sources map beside them.
func TestXDPSourcesPeriods(t *testing.T) {
	deny, err := responder.NewDeny([]netip.Prefix{netip.MustParsePrefix("198.18.0.3/32")})
	if err != nil {
		t.Fatal(err)
	}
	fx := newFixtureWith(t, responder.Limits{PerIPRate: 1 << 30, PerIPBurst: 1 << 20, UnprovenRate: 1 << 30, UnprovenBurst: 1 << 20, TrackedIPs: 1024},
		fixtureOpts{deny: deny})
	fx.fp.drained.every = 0 // every drain reads the budget entries
	fx.fp.DrainSources(nil)
	c := fx.dial(t, cliAddr4, srvAddr4)
	bad := fx.dial(t, cliAddr4b, srvAddr4)
	for period, n := range []int{200, 50, 30} {
		for i := 0; i < n; i++ {
			if r := c.ask(t, a2sInfo, time.Second); len(r) != 9 {
				t.Fatalf("period %d, A2S_INFO %d: % x", period, i, r)
			}
		}
		denied := 0
		if period == 1 {
			for range 5 {
				if r := bad.ask(t, a2sInfo, 100*time.Millisecond); r != nil {
					t.Fatalf("the denied source was answered: % x", r)
				}
			}
			denied = 5
		}
		got := fx.fp.DrainSources(nil)
		slices.SortFunc(got, func(a, b responder.SourceCount) int { return int(b.Requests) - int(a.Requests) })
		want := []string{fmt.Sprintf("198.18.0.2/32 %d", n)}
		if denied > 0 {
			want = append(want, fmt.Sprintf("198.18.0.3/32 %d", denied))
		}
		var have []string
		for _, sc := range got {
			have = append(have, fmt.Sprintf("%s %d", sc.Source, sc.Requests))
		}
		if !slices.Equal(have, want) {
			t.Fatalf("period %d: drained %v, want %v", period, have, want)
		}
	}
	if again := fx.fp.DrainSources(nil); len(again) != 0 {
		t.Fatalf("a drain with nothing counted: %+v", again)
	}
}

//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/queryd/queryd/responder"
)

// TestXDPStatelessChallenge (issue 43): a reply no larger than its request
// (A2S's 9-byte challenge to a 25-byte INFO) from sources never seen
// before leaves the per-source tables as they were (no budget entry, no
// entry in the sources map): a spoofed flood of them costs no insert. The
// requests are still counted per source (the seen table, drained into the
// busiest sources). An answer that amplifies (INFO to the token) still
// makes the source's budget entry and draws on it.
func TestXDPStatelessChallenge(t *testing.T) {
	fx := newFixture(t, responder.Limits{PerIPRate: 1 << 30, PerIPBurst: 1 << 20, UnprovenRate: 1 << 30, UnprovenBurst: 1 << 20, TrackedIPs: 1024})
	fx.fp.drained.every = 0
	fx.fp.DrainSources(nil)
	v4 := fx.dial(t, cliAddr4, srvAddr4)
	v6 := fx.dial(t, cliAddr6, srvAddr6)
	var tok []byte
	for _, c := range []*client{v4, v6} {
		for i := range 30 {
			r := c.ask(t, a2sInfo, time.Second)
			if len(r) != 9 || r[4] != 'A' {
				t.Fatalf("A2S_INFO %d: % x, want the 9-byte challenge", i, r)
			}
			tok = r[5:9]
		}
	}
	if got := fx.count(t, pA2S, oChallenged); got != 60 {
		t.Fatalf("challenged %d in the program, want 60", got)
	}
	if keys := mapKeys(t, fx.fp.maps.Perip); len(keys) != 0 {
		t.Fatalf("budget entries after 60 challenges: %v, want none", keys)
	}
	if keys := mapKeys(t, fx.fp.maps.Sources); len(keys) != 0 {
		t.Fatalf("sources map entries after 60 challenges: %v, want none", keys)
	}
	got := fx.fp.DrainSources(nil)
	var have []string
	for _, sc := range got {
		have = append(have, sc.Source.String())
		if sc.Requests != 30 {
			t.Errorf("source %s: %d requests counted, want 30", sc.Source, sc.Requests)
		}
	}
	slices.Sort(have)
	if want := []string{"198.18.0.2/32", "fd00:5164:7864::/64"}; !slices.Equal(have, want) {
		t.Fatalf("drained sources %v, want %v", have, want)
	}

	// tok is cliAddr6's; ask cliAddr4's again for the answer that amplifies
	r := v4.ask(t, a2sInfo, time.Second)
	if len(r) != 9 {
		t.Fatalf("challenge: % x", r)
	}
	tok = r[5:9]
	info := v4.ask(t, a2sWithToken('T', tok), time.Second)
	if len(info) <= len(a2sWithToken('T', tok)) {
		t.Fatalf("A2S_INFO with the token: % x, want the INFO reply", info)
	}
	keys := mapKeys(t, fx.fp.maps.Perip)
	if len(keys) != 1 || keys[0] != netip.AddrFrom16(cliAddr4.As16()).String() {
		t.Fatalf("budget entries after an answer to a token: %v, want %s's alone", keys, cliAddr4)
	}
	var p querydPeer
	if err := fx.fp.maps.Perip.Lookup(srcKeyOf(t, fx, cliAddr4), &p); err != nil {
		t.Fatal(err)
	}
	if p.Tat == 0 {
		t.Fatalf("%s's budget entry drew nothing: %+v", cliAddr4, p)
	}
}

// mapKeys lists the source addresses of a map keyed by querydSrckey.
func mapKeys(t *testing.T, m *ebpf.Map) []string {
	t.Helper()
	var out []string
	var k querydSrckey
	var v []byte
	it := m.Iterate()
	for it.Next(&k, &v) {
		out = append(out, netip.AddrFrom16(k.Ip.B).String())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// srcKeyOf is the program's key of an IPv4 source at the fixture's server.
func srcKeyOf(t *testing.T, fx *fixture, a netip.Addr) querydSrckey {
	t.Helper()
	s := fx.main()
	if s == nil {
		t.Fatal("no server")
	}
	return querydSrckey{Ip: querydIpkey{B: a.As16()}, Server: s.index}
}

//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"net"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/queryd/queryd/responder"
)

// tagEgress tags the client's IPv4 queries to testPort with VLAN 10 out of
// band (a TCX egress program calling bpf_skb_vlan_push on the client's end
// of the veth), until the returned function removes it.
func tagEgress(t *testing.T, fx *fixture) (untag func()) {
	t.Helper()
	var objs querydtestObjects
	if err := loadQuerydtestObjects(&objs, nil); err != nil {
		t.Fatal(err)
	}
	var l link.Link
	err := inNS(fx.net.cliNS, func() error {
		ifc, err := net.InterfaceByName(fx.net.cliIf)
		if err != nil {
			return err
		}
		l, err = link.AttachTCX(link.TCXOptions{Interface: ifc.Index, Program: objs.QuerydVlanPush, Attach: ebpf.AttachTCXEgress})
		return err
	})
	if err != nil {
		objs.Close()
		t.Skipf("TCX (Linux 6.6) refused: %v: skipped", err)
	}
	return func() { l.Close(); objs.Close() }
}

// TestXDPVLANOffloaded (finding 3): a query that arrives with its VLAN tag
// taken off the frame (out of band, as rx-vlan-offload delivers it) is
// passed by the device-bound program, which reads the tag with
// bpf_xdp_metadata_rx_vlan_tag, and the kernel drops it (no VLAN 10
// device): silence with XDP on and off, where before the program answered
// it untagged onto the native VLAN. Untagged again, it is answered.
func TestXDPVLANOffloaded(t *testing.T) {
	fx := newFixture(t, responder.Limits{})
	if !fx.fp.links[0].bound {
		t.Fatal("the device-bound program is not attached on a veth (bpf_xdp_metadata_rx_vlan_tag: Linux 6.8)")
	}
	c := fx.dial(t, cliAddr4, srvAddr4)
	if c.ask(t, a2sInfo, time.Second) == nil {
		t.Fatal("no answer untagged")
	}
	untag := tagEgress(t, fx)
	for _, on := range []bool{true, false} {
		fx.setEnabled(t, on)
		st0, _ := fx.stats()
		reply := c.ask(t, a2sInfo, 300*time.Millisecond)
		st1, _ := fx.stats()
		if reply != nil {
			t.Errorf("XDP on %v: a query tagged VLAN 10 was answered: % x", on, reply)
		}
		want := uint64(0)
		if on {
			want = 1
		}
		if got := st1.Passed[querydPassReasonPASS_VLAN] - st0.Passed[querydPassReasonPASS_VLAN]; got != want {
			t.Errorf("XDP on %v: passed as vlan %d times, want %d", on, got, want)
		}
		if st1.Req != st0.Req {
			t.Errorf("XDP on %v: the program answered or dropped the tagged query", on)
		}
	}
	fx.setEnabled(t, true)
	untag()
	before := fx.count(t, pA2S, oChallenged)
	if c.ask(t, a2sInfo, time.Second) == nil || fx.count(t, pA2S, oChallenged) != before+1 {
		t.Fatal("untagged again, the program did not answer")
	}
}

// TestXDPVLANUppers (finding 3, where the tag cannot be read): the unbound
// program (generic mode, or a kernel before 6.8) on an interface marked as
// having VLAN devices on it passes every query, and the socket path
// answers it as without XDP; unmarked, the program answers. (This kernel
// has no 8021q module to make a real VLAN device: the mark that netlink
// sets for one is written directly.)
func TestXDPVLANUppers(t *testing.T) {
	fx := newFixtureWith(t, responder.Limits{}, fixtureOpts{unbound: true})
	if fx.fp.links[0].bound {
		t.Fatal("the unbound program was asked for")
	}
	c := fx.dial(t, cliAddr4, srvAddr4)
	if c.ask(t, a2sInfo, time.Second) == nil {
		t.Fatal("no answer")
	}
	mark := func(on bool) { // the interface's flags as its destinations carry them
		idx := fx.fp.links[0].index
		fx.fp.mu.Lock()
		defer fx.fp.mu.Unlock()
		for k := range fx.fp.lastDests {
			if k.Ifindex != idx {
				continue
			}
			var v querydDest
			if err := fx.fp.maps.Dests.Lookup(k, &v); err != nil {
				t.Fatal(err)
			}
			v.Iflags = 0
			if on {
				v.Iflags = querydIfaceFlagsIFACE_VLAN_UPPERS
			}
			if err := fx.fp.maps.Dests.Put(k, &v); err != nil {
				t.Fatal(err)
			}
		}
	}
	mark(true)
	st0, _ := fx.stats()
	if c.ask(t, a2sInfo, time.Second) == nil {
		t.Fatal("the socket path did not answer")
	}
	st1, _ := fx.stats()
	if st1.Passed[querydPassReasonPASS_VLAN] != st0.Passed[querydPassReasonPASS_VLAN]+1 || st1.Req != st0.Req {
		t.Fatalf("with VLAN uppers the program did not pass the query (passed %v → %v)", st0.Passed, st1.Passed)
	}
	mark(false)
	before := fx.count(t, pA2S, oChallenged)
	if c.ask(t, a2sInfo, time.Second) == nil || fx.count(t, pA2S, oChallenged) != before+1 {
		t.Fatal("without VLAN uppers the program did not answer")
	}
}

// TestNetlinkVLANKind: the link dump's IFLA_LINKINFO nesting is read for
// the kind ("vlan") that marks an interface's VLAN uppers.
func TestNetlinkVLANKind(t *testing.T) {
	// IFLA_INFO_KIND "vlan\0" (len 9, padded to 12), then IFLA_INFO_DATA.
	b := []byte{9, 0, 1, 0, 'v', 'l', 'a', 'n', 0, 0, 0, 0, 8, 0, 2, 0, 1, 2, 3, 4}
	if got := infoKind(b); got != "vlan" {
		t.Fatalf("infoKind = %q, want vlan", got)
	}
	for _, bad := range [][]byte{nil, {3, 0, 1, 0}, {200, 0, 1, 0, 'v'}} {
		if got := infoKind(bad); got != "" {
			t.Errorf("infoKind(% x) = %q, want nothing", bad, got)
		}
	}
}

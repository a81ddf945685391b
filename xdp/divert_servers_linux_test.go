package xdp

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/queryd/queryd/responder"
)

// divertEntry is the program's divert entry for game (ok false: none).
func divertEntry(t *testing.T, fx *fixture, game netip.AddrPort) (querydDivertVal, bool) {
	t.Helper()
	k := divertKey(game)
	var v querydDivertVal
	if err := fx.fp.maps.DivertMap.Lookup(&k, &v); err != nil {
		return v, false
	}
	return v, true
}

// TestDivertServers: FastPath.Divert is per server. A server's entry
// carries its index in the per-destination tables and its protocols'
// mask (SetProtocols for that server rewrites it); an unknown server and
// an address another Divert holds are refused; Close removes the entry
// (and turns divert_on off with the last one); SetServers' removal of the
// server drops its entries too.
func TestDivertServers(t *testing.T) {
	fx := newFixture(t, responder.Limits{})
	game := netip.AddrPortFrom(srvAddr4, testPort+100)
	on := func() uint32 {
		var v uint32
		if err := fx.fp.maps.DivertOn.Lookup(uint32(0), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if _, err := fx.divert("nobody", []DivertAddr{{Game: game, Hidden: testPort}}, nil); err == nil {
		t.Error("Divert for a server the fast path does not have: no error")
	}
	dv, err := fx.divert(testServer, []DivertAddr{{Game: game, Hidden: testPort}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := divertEntry(t, fx, game)
	if !ok || uint32(v.Server) != fx.main().index || v.Hidden != testPort || v.Protos == 0 || on() != 1 {
		t.Fatalf("entry %+v (%v), divert_on %d: want server %d, hidden %d, the protocols' mask, on", v, ok, on(), fx.main().index, testPort)
	}
	if _, err := fx.divert(testServer, []DivertAddr{{Game: game, Hidden: testPort}}, nil); err == nil || !strings.Contains(err.Error(), "already diverted") {
		t.Errorf("a second Divert of %v: %v, want it refused", game, err)
	}
	protos := fx.main().protocols()
	fx.fp.SetProtocols(testServer, nil)
	if v, _ := divertEntry(t, fx, game); v.Protos != 0 {
		t.Errorf("after SetProtocols(none) the mask is %#x, want 0", v.Protos)
	}
	fx.fp.SetProtocols(testServer, protos)
	if err := dv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := divertEntry(t, fx, game); ok || on() != 0 {
		t.Errorf("after Close: entry still there (%v) or divert_on %d", ok, on())
	}
	if _, err := fx.divert(testServer, []DivertAddr{{Game: game, Hidden: testPort}}, nil); err != nil {
		t.Fatalf("Divert again after Close: %v", err)
	}
	if err := fx.fp.SetServers(nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := divertEntry(t, fx, game); ok || on() != 0 {
		t.Errorf("after the server's removal: entry still there (%v) or divert_on %d", ok, on())
	}
}

package responder

import (
	"net/netip"
	"testing"
)

// TestDeny: prefixes of both families, an address alone, IPv4-mapped
// prefixes and sources, overlapping and duplicate prefixes; nil denies
// nothing; more than MaxDeny and invalid prefixes are refused.
func TestDeny(t *testing.T) {
	pp := netip.MustParsePrefix
	d, err := NewDeny([]netip.Prefix{pp("198.51.100.0/24"), pp("198.51.100.7/32"), pp("2001:db8::/32"),
		pp("::ffff:203.0.113.0/120"), pp("198.51.100.0/24"), pp("10.1.2.3/8")})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 5 {
		t.Errorf("Len = %d, want 5 (one duplicate): %v", d.Len(), d.Prefixes())
	}
	for _, c := range []struct {
		addr string
		want bool
	}{
		{"198.51.100.1", true}, {"198.51.100.7", true}, {"198.51.101.1", false},
		{"::ffff:198.51.100.9", true}, {"203.0.113.200", true}, {"::ffff:203.0.113.1", true},
		{"10.200.0.1", true}, {"11.0.0.1", false},
		{"2001:db8:1::1", true}, {"2001:db9::1", false}, {"fe80::1%eth0", false},
	} {
		if got := d.Contains(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("Contains(%s) = %v, want %v", c.addr, got, c.want)
		}
	}
	var none *Deny
	if none.Contains(netip.MustParseAddr("198.51.100.1")) || none.Len() != 0 || none.Prefixes() != nil {
		t.Error("a nil Deny denies something")
	}
	if d, err := NewDeny(nil); d != nil || err != nil {
		t.Errorf("NewDeny(nil) = %v, %v; want nil, nil", d, err)
	}
	if _, err := NewDeny([]netip.Prefix{{}}); err == nil {
		t.Error("an invalid prefix was accepted")
	}
	many := make([]netip.Prefix, MaxDeny+1)
	for i := range many {
		many[i] = netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)
	}
	if _, err := NewDeny(many); err == nil {
		t.Errorf("%d prefixes accepted, at most %d", len(many), MaxDeny)
	}
}

// TestDenyAllocates: the socket path's check allocates nothing.
func TestDenyAllocates(t *testing.T) {
	d, err := NewDeny([]netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8::/32")})
	if err != nil {
		t.Fatal(err)
	}
	a := netip.MustParseAddr("2001:db8::5")
	if n := testing.AllocsPerRun(100, func() { d.Contains(a) }); n != 0 {
		t.Errorf("Contains allocates %v times", n)
	}
}

package config

import (
	"net/netip"
	"testing"
)

// TestLimitsDeny: [limits] deny takes prefixes of both families and
// addresses alone, parsed once into the list both paths check.
func TestLimitsDeny(t *testing.T) {
	c, err := Parse([]byte("[limits]\ndeny = [\"198.51.100.0/24\", \"2001:db8::/32\", \"203.0.113.9\", \"2001:db8:1::5\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := c.Limits.DenyList()
	if d.Len() != 4 {
		t.Fatalf("deny has %d prefixes, want 4: %v", d.Len(), d.Prefixes())
	}
	for a, want := range map[string]bool{"198.51.100.77": true, "203.0.113.9": true, "203.0.113.10": false, "2001:db8:ffff::1": true} {
		if d.Contains(netip.MustParseAddr(a)) != want {
			t.Errorf("deny contains %s: want %v", a, want)
		}
	}
	if c, err := Parse([]byte("")); err != nil || c.Limits.DenyList() != nil {
		t.Errorf("no [limits] deny: %v, %v; want none", c.Limits.DenyList(), err)
	}
}

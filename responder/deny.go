package responder

import (
	"fmt"
	"net/netip"
	"slices"
)

// MaxDeny bounds [limits] deny: the prefixes both paths check (the XDP
// program's trie has this many entries).
const MaxDeny = 4096

// Deny is a parsed, immutable [limits] deny list: the sources whose
// datagrams neither the socket path nor the XDP program answers. One Deny
// is made per configuration and given to both. A nil *Deny denies nothing.
type Deny struct {
	prefixes []netip.Prefix // masked, IPv4 unmapped, sorted, unique
	bits     []int          // the prefix lengths present, longest first
	set      map[netip.Prefix]struct{}
}

// NewDeny makes the list; an IPv4-mapped IPv6 prefix is its IPv4 prefix.
// It fails on an invalid prefix or on more than MaxDeny.
func NewDeny(ps []netip.Prefix) (*Deny, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	if len(ps) > MaxDeny {
		return nil, fmt.Errorf("%d prefixes, at most %d", len(ps), MaxDeny)
	}
	d := &Deny{set: make(map[netip.Prefix]struct{}, len(ps))}
	for _, p := range ps {
		if !p.IsValid() {
			return nil, fmt.Errorf("invalid prefix %v", p)
		}
		p = canonical(p)
		if _, dup := d.set[p]; dup {
			continue
		}
		d.set[p] = struct{}{}
		d.prefixes = append(d.prefixes, p)
		if !slices.Contains(d.bits, p.Bits()) {
			d.bits = append(d.bits, p.Bits())
		}
	}
	slices.SortFunc(d.prefixes, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	slices.Sort(d.bits)
	slices.Reverse(d.bits)
	return d, nil
}

// canonical masks p and turns an IPv4-mapped prefix into IPv4.
func canonical(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() {
		bits := max(p.Bits()-96, 0)
		p = netip.PrefixFrom(a.Unmap(), bits)
	}
	return p.Masked()
}

// Contains reports whether a (an IPv4-mapped address as its IPv4 address)
// is in the list. It allocates nothing: a map lookup per prefix length
// present.
func (d *Deny) Contains(a netip.Addr) bool {
	if d == nil {
		return false
	}
	a = a.Unmap().WithZone("")
	for _, b := range d.bits {
		if b > a.BitLen() {
			continue
		}
		p, err := a.Prefix(b)
		if err != nil {
			continue
		}
		if _, ok := d.set[p]; ok {
			return true
		}
	}
	return false
}

// Prefixes returns the list's prefixes, masked, sorted and unique (IPv4
// ones as IPv4).
func (d *Deny) Prefixes() []netip.Prefix {
	if d == nil {
		return nil
	}
	return slices.Clone(d.prefixes)
}

// Len is the number of prefixes.
func (d *Deny) Len() int {
	if d == nil {
		return 0
	}
	return len(d.prefixes)
}

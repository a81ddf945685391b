package steer

import "net/netip"

// keyOf is ip as the program looks it up: ::ffff:a.b.c.d for IPv4, the /64
// of an IPv6 address followed by zeros (as the responder's budgets key
// sources).
func keyOf(ip netip.Addr) [16]byte {
	ip = ip.Unmap()
	k := ip.As16()
	if ip.Is6() {
		clear(k[8:])
	}
	return k
}

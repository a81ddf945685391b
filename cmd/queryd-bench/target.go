package main

import (
	"fmt"
	"net/netip"
)

// loopback127 is the IPv4 loopback network.
var loopback127 = netip.MustParsePrefix("127.0.0.0/8")

// parseTarget parses a -target address and refuses anything but a loopback
// address (127.0.0.0/8 or ::1): the load generator floods, and must never be
// pointed at another machine.
func parseTarget(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("-target %q: want IP:PORT: %w", s, err)
	}
	a := ap.Addr().Unmap()
	if !loopback127.Contains(a) && a != netip.IPv6Loopback() {
		return netip.AddrPort{}, fmt.Errorf("-target %s: refused: the load generator only targets loopback (127.0.0.0/8 or ::1)", s)
	}
	if ap.Port() == 0 {
		return netip.AddrPort{}, fmt.Errorf("-target %s: want a port other than 0", s)
	}
	return netip.AddrPortFrom(a, ap.Port()), nil
}

// maxSources is the most source sockets (127.0.0.2 ... 127.0.1.1).
const maxSources = 256

// sourceAddr is the local address source i binds to: 127.0.0.2 + i for an
// IPv4 target (distinct IPs, so per-IP budgets, tokens and SO_REUSEPORT
// hashing see distinct clients), ::1 for an IPv6 target (only that one IPv6
// loopback address exists; sources then differ by port only).
func sourceAddr(target netip.AddrPort, i int) netip.Addr {
	if target.Addr().Is6() {
		return netip.IPv6Loopback()
	}
	n := 2 + i
	return netip.AddrFrom4([4]byte{127, 0, byte(n >> 8), byte(n)})
}

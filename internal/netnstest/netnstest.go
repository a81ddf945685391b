// Package netnstest makes a small test network for tests that need a real
// network interface (the XDP fast path): two network namespaces made by the
// test, a server's and a client's, joined by a veth pair, with addresses
// from the benchmarking range 198.18.0.0/15 (RFC 2544) and a unique local
// IPv6 prefix that exist only inside them, removed when the test ends.
//
// Tests send only to these addresses and only from inside the namespaces:
// from a thread moved into one (Enter, Do), or from a process started by
// such a thread (a child inherits its thread's network namespace). New
// skips the test, with the reason, where the network cannot be made: not
// root, no ip(8), or a kernel that refuses XDP; and under -short.
package netnstest

import "net/netip"

// The test network's addresses.
var (
	ServerAddr4  = netip.MustParseAddr("198.18.0.1")
	ClientAddr4  = netip.MustParseAddr("198.18.0.2")
	ClientAddr4b = netip.MustParseAddr("198.18.0.3") // a second client address
	ServerAddr6  = netip.MustParseAddr("fd00:5164:7864::1")
	ClientAddr6  = netip.MustParseAddr("fd00:5164:7864::2")
	// Spoofed is held by no namespace: the server routes it to the
	// client's end of the veth, where replies to spoofed sources can be
	// captured (the client does not forward them further).
	Spoofed = netip.MustParsePrefix("198.18.1.0/24")
)

// The ranges every test address is in.
var (
	range4 = netip.MustParsePrefix("198.18.0.0/15")
	range6 = netip.MustParsePrefix("fd00:5164:7864::/48")
)

// Contains reports whether a is one of the test network's addresses (in
// 198.18.0.0/15 or fd00:5164:7864::/48): the only ones a test may send to.
func Contains(a netip.Addr) bool {
	a = a.Unmap()
	return range4.Contains(a) || range6.Contains(a)
}

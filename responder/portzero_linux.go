//go:build linux

package responder

import (
	"fmt"
	"net/netip"
	"sync"

	"golang.org/x/sys/unix"
)

// portZero serializes the listeners that ask for port 0 between choosing
// their port (freePort) and binding it, so that two servers of this
// process never choose the same one.
var portZero sync.Mutex

// freePort returns ap with a port no socket holds, for a listener asked
// for port 0. Binding SO_REUSEPORT sockets to port 0 directly is not
// enough: the kernel may hand such a socket a port that another
// SO_REUSEPORT socket of the same user holds, and the two then split the
// datagrams between them (two servers of one host answering each other's
// queries). A socket without SO_REUSEPORT is only given a port nobody
// holds; it is closed, and the workers bind the port it had.
func freePort(ap netip.AddrPort, v6 bool) (netip.AddrPort, error) {
	family := unix.AF_INET
	if v6 {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		return ap, fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	if v6 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1); err != nil {
			return ap, fmt.Errorf("setsockopt IPV6_V6ONLY: %w", err)
		}
	}
	if err := unix.Bind(fd, sockaddr(ap, v6)); err != nil {
		return ap, fmt.Errorf("bind %s: %w", ap, err)
	}
	return boundAddr(fd)
}

// sockaddr is ap as the socket calls take it.
func sockaddr(ap netip.AddrPort, v6 bool) unix.Sockaddr {
	if v6 {
		return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().Unmap().As4()}
}

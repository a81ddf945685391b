package relay

import (
	"fmt"
	"net/netip"
)

// Peer returns the client behind the session whose socket the game server
// sees as addr:port, and that socket's address. addr may be left invalid
// when only one session uses port (always so when every session shares one
// local address). A session asked about is proven: the game server has
// taken its client in.
func (r *Relay) Peer(port int, addr netip.Addr) (client, local netip.AddrPort, err error) {
	if port < 1 || port > 65535 {
		return client, local, fmt.Errorf("port %d out of range", port)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var s *session
	if addr.IsValid() {
		s = r.byLocal[netip.AddrPortFrom(addr.Unmap(), uint16(port))]
	} else if a, ok := r.lo.single(); ok {
		s = r.byLocal[netip.AddrPortFrom(a, uint16(port))]
	}
	if s == nil && !addr.IsValid() {
		var n int
		if s, n = r.onPort(uint16(port)); n > 1 {
			return client, local, fmt.Errorf("%d relay sessions use port %d (the game server sees each at its own address): give \"addr\"", n, port)
		}
	}
	if s == nil {
		if addr.IsValid() {
			return client, local, fmt.Errorf("no relay session at %s", netip.AddrPortFrom(addr, uint16(port)))
		}
		return client, local, fmt.Errorf("no relay session on port %d", port)
	}
	r.promoteLocked(s, stateProven)
	return s.client, s.addr, nil
}

// onPort returns a session on local port port and how many there are;
// r.mu is held.
func (r *Relay) onPort(port uint16) (*session, int) {
	var found *session
	n := 0
	for a, s := range r.byLocal {
		if a.Port() == port {
			found = s
			n++
		}
	}
	return found, n
}

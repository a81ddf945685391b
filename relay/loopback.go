package relay

import (
	"hash/maphash"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
)

// loopbacks picks the local address of each session's socket. With the
// game server on an IPv4 loopback address, each client (an IPv4 address or
// an IPv6 /64) gets an address of 127.0.0.0/8 of its own, a keyed hash of
// it in 127.1.0.0 to 127.254.255.255, so that the game server's per-address
// limits and bans work per client again; 127.0.0.1 (where the [upstream]
// poller and the Quake 3 probe come from) and the game server's own address
// are never one. Linux routes all of 127/8 to lo; where an address other
// than 127.0.0.1 cannot be bound, every session uses 127.0.0.1 and New
// says so. With the game server elsewhere the kernel picks the address.
type loopbacks struct {
	perClient bool
	fixed     netip.Addr // every session's address when not per client (invalid: the kernel's choice)
	up        netip.Addr
	seed      maphash.Seed // the key: random per process
}

func newLoopbacks(up netip.Addr, log *slog.Logger) loopbacks {
	l := loopbacks{up: up, seed: maphash.MakeSeed()}
	switch {
	case !up.IsLoopback():
	case up.Is6():
		l.fixed = up
		log.Warn("relay: the game server is on ::1, the one IPv6 loopback address: it sees every player at ::1 "+
			"(its per-address limits and bans apply to all at once); an IPv4 loopback upstream (127.0.0.1) gives each client an address of its own",
			"upstream", up)
	default:
		probe := l.derive(sourceOf(netip.MustParseAddr("192.0.2.1")))
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: probe.AsSlice()})
		if err == nil {
			c.Close()
			l.perClient = true
			break
		}
		log.Warn("relay: cannot bind loopback addresses other than 127.0.0.1 here: the game server sees every player at 127.0.0.1 "+
			"(its per-address limits and bans apply to all at once); Linux routes all of 127.0.0.0/8 to lo",
			"os", runtime.GOOS, "probe", probe, "err", err)
		l.fixed = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return l
}

// addrFor is the local address of client's sessions (invalid: any).
func (l *loopbacks) addrFor(client netip.Addr) netip.Addr {
	if l.perClient {
		return l.derive(sourceOf(client))
	}
	return l.fixed
}

// single returns the one local address every session uses, when there is one.
func (l *loopbacks) single() (netip.Addr, bool) { return l.fixed, l.fixed.IsValid() }

// derive maps a client to its address in 127.1.0.0 to 127.254.255.255,
// never the game server's.
func (l *loopbacks) derive(k sourceKey) netip.Addr {
	h := maphash.Comparable(l.seed, k)
	a := netip.AddrFrom4([4]byte{127, byte(1 + h%254), byte(h >> 8), byte(h >> 16)})
	if a == l.up {
		a = netip.AddrFrom4([4]byte{127, byte(1 + h%254), byte(h >> 8), byte(h>>16) ^ 1})
	}
	return a
}

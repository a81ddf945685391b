package relay

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// loopGuard refuses sessions for sources that would make a loop: the game
// server's own address (any port: with the game server on another host,
// one datagram spoofed from it would be relayed to it, its answer relayed
// back to its own port, which answers that, and so on), and this host's
// own addresses (not loopback ones: a loopback source is a process on this
// host, which may be a player; the kernel does not take 127/8 from outside,
// nor, on Linux, a datagram from a local address arriving on another
// interface). From a loopback game server only its own address:port is
// refused.
type loopGuard struct {
	up   netip.AddrPort
	host atomic.Pointer[[]netip.Addr] // this host's addresses but loopback ones
	done chan struct{}
}

// hostAddrsEvery is how often the host's addresses are read again.
const hostAddrsEvery = 30 * time.Second

// start reads the host's addresses and keeps them current until stop.
func (g *loopGuard) start(up netip.AddrPort, wg *sync.WaitGroup) {
	g.up, g.done = up, make(chan struct{})
	g.refresh()
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(hostAddrsEvery)
		defer t.Stop()
		for {
			select {
			case <-g.done:
				return
			case <-t.C:
				g.refresh()
			}
		}
	}()
}

func (g *loopGuard) stop() { close(g.done) }

// refresh reads the host's interface addresses (keeping the last list when
// that fails).
func (g *loopGuard) refresh() {
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		if g.host.Load() == nil {
			g.host.Store(&[]netip.Addr{})
		}
		return
	}
	out := make([]netip.Addr, 0, len(ifs))
	for _, a := range ifs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && !p.Addr().IsLoopback() {
			out = append(out, p.Addr().Unmap().WithZone(""))
		}
	}
	g.host.Store(&out)
}

// refuse reports whether a session for src would loop.
func (g *loopGuard) refuse(src netip.AddrPort) bool {
	a := src.Addr().Unmap().WithZone("")
	switch {
	case a == g.up.Addr():
		return src.Port() == g.up.Port() || !a.IsLoopback()
	case a.IsLoopback():
		return false
	case a.IsUnspecified():
		return true
	}
	for _, h := range *g.host.Load() {
		if h == a {
			return true
		}
	}
	return false
}

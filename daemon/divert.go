package daemon

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/xdp"
)

// [listen] divert: the stock game server keeps its port; the XDP program
// takes the queries to it (xdp/bpf/divert.h). A server binds, beside each
// of its divert addresses, a port of the kernel's choosing (the hidden
// port) on the same address: the program hands it the claimed queries it
// does not answer itself, and the egress program gives its replies the
// game port back. Divert is per server: each server's divert addresses
// carry its index in the program's tables, its protocols and its counters
// (server="NAME"), taken when the server attaches to the fast path and
// released when it stops. Without the fast path there is no divert, and a
// divert that did nothing would leave the game server answering every
// query: the start is refused instead (the server's, on SIGHUP), saying
// why and what to use (relay mode).

// listenOf is what the responder binds: [listen] udp, then ADDR:0 for
// each divert address (their hidden ports).
func listenOf(c *config.Config) []netip.AddrPort {
	out := append([]netip.AddrPort(nil), c.Listen.UDP...)
	for _, ap := range c.Listen.Divert {
		out = append(out, netip.AddrPortFrom(ap.Addr(), 0))
	}
	return out
}

// gameListen is the modules' [listen] for the game port they report: the
// divert addresses (the game server's) when set, else [listen] udp.
func gameListen(c *config.Config) []netip.AddrPort {
	if len(c.Listen.Divert) > 0 {
		return c.Listen.Divert
	}
	return c.Listen.UDP
}

// divertRefused is the start's error for a server with divert when the
// fast path could not be attached (why); nil for one without divert.
func divertRefused(c *config.Config, why error) error {
	if len(c.Listen.Divert) == 0 {
		return nil
	}
	return fmt.Errorf("[listen] divert: the XDP fast path could not be attached (%w): %s", why, config.DivertNeeds())
}

// anyDivertRefused is divertRefused for the first of servers with divert.
func anyDivertRefused(servers []*Server, why error) error {
	for _, s := range servers {
		if err := divertRefused(s.config(), why); err != nil {
			return fmt.Errorf("server %s: %w", s.name, err)
		}
	}
	return nil
}

// attachDivert takes the server's divert addresses in f (s.mu held, the
// server attached to f); nothing without [listen] divert.
func (s *Server) attachDivert(f *xdp.FastPath) error {
	c := s.cfg
	if len(c.Listen.Divert) == 0 {
		return nil
	}
	bound := s.udp.Addrs()
	if len(bound) != len(c.Listen.UDP)+len(c.Listen.Divert) {
		return fmt.Errorf("[listen] divert: %d sockets bound for %d addresses", len(bound), len(c.Listen.UDP)+len(c.Listen.Divert))
	}
	addrs := make([]xdp.DivertAddr, len(c.Listen.Divert))
	for i, ap := range c.Listen.Divert {
		addrs[i] = xdp.DivertAddr{Game: ap, Hidden: bound[len(c.Listen.UDP)+i].Port()}
	}
	dv, err := f.Divert(s.name, addrs, c.DivertTakes())
	if err != nil {
		return divertRefused(c, err)
	}
	s.divert = dv
	if s.sleep != nil { // [sleep]: the program reports joins while the server rests
		dv.OnJoin(s.divertJoined)
		if s.resting {
			if err := dv.Rest(true); err != nil {
				s.log.Error("sleep: the XDP program could not be told the server rests: joins through divert are not seen", "err", err)
			}
		}
	}
	return nil
}

// closeDivert releases the server's divert addresses (their queries reach
// the game server again), once.
func (s *Server) closeDivert() {
	s.mu.Lock()
	dv := s.divert
	s.divert = nil
	s.mu.Unlock()
	if dv != nil {
		if err := dv.Close(); err != nil {
			s.log.Warn("divert: close", "err", err)
		}
	}
}

// errNoFastPath is why a server with divert cannot start on SIGHUP while
// the host runs without the fast path.
var errNoFastPath = errors.New("the host runs without it")

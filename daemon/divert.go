package daemon

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/xdp"
)

// [listen] divert: the stock game server keeps its port; the XDP program
// takes the queries to it (xdp/bpf/divert.h). queryd binds, beside each
// divert address, a port of the kernel's choosing (the hidden port) on the
// same address: the program hands it the claimed queries it does not
// answer itself, and the egress program gives its replies the game port
// back. Without the fast path there is no divert, and a divert that did
// nothing would leave the game server answering every query: the start is
// refused instead, saying why and what to use (relay mode).

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

// divertRefused is the start's error when divert is on but the fast path
// could not be attached (why).
func (d *Daemon) divertRefused(why error) error {
	if len(d.cfg.Listen.Divert) == 0 {
		return nil
	}
	return fmt.Errorf("[listen] divert: the XDP fast path could not be attached (%w): %s", why, config.DivertNeeds())
}

// newDivert attaches divert after the fast path (nil without [listen]
// divert).
func (d *Daemon) newDivert() (part, error) {
	c := d.cfg
	if len(c.Listen.Divert) == 0 {
		return nil, nil
	}
	if d.xdp == nil { // newXDP refuses first; this is a guard
		return nil, d.divertRefused(errors.New("not attached"))
	}
	bound := d.udp.Addrs()
	if len(bound) != len(c.Listen.UDP)+len(c.Listen.Divert) {
		return nil, fmt.Errorf("[listen] divert: %d sockets bound for %d addresses", len(bound), len(c.Listen.UDP)+len(c.Listen.Divert))
	}
	addrs := make([]xdp.DivertAddr, len(c.Listen.Divert))
	for i, ap := range c.Listen.Divert {
		addrs[i] = xdp.DivertAddr{Game: ap, Hidden: bound[len(c.Listen.UDP)+i].Port()}
	}
	dv, err := d.xdp.Divert(addrs)
	if err != nil {
		return nil, d.divertRefused(err)
	}
	d.divert = dv
	dv.SetProtocols(protocolsOf(d.protos))
	return bgPart{name: "divert", stop: dv.Close}, nil
}

// divertProtocols makes the live protocols the ones divert takes queries
// of (at start and on reload).
func (d *Daemon) divertProtocols(protos []live) {
	if d.divert != nil {
		if err := d.divert.SetProtocols(protocolsOf(protos)); err != nil {
			d.log.Warn("divert: the protocols could not be written", "err", err)
		}
	}
}

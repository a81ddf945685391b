package daemon

import (
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/xdp"
)

// newXDP loads and attaches the XDP fast path when [xdp] interfaces is set.
// It never fails the start: when the kernel refuses (no CAP_BPF or
// CAP_NET_ADMIN, no XDP, an unknown interface), queryd logs why and serves
// on the socket path.
func (d *Daemon) newXDP() (part, error) {
	c := d.cfg.XDP
	if len(c.Interfaces) == 0 {
		return nil, nil
	}
	lim := shareLimits(limitsOf(d.cfg))
	f, err := xdp.New(xdp.Config{
		Interfaces: c.Interfaces,
		Mode:       xdpModes[c.Mode],
		Listen:     d.udp.Addrs(),
		Issuer:     d.issuer,
		Limits:     lim,
		Deny:       d.cfg.Limits.DenyList(),
		SilentFrom: d.silence.from,
		Logger:     d.log.With("part", "xdp"),
		Registry:   d.reg,
	})
	if err != nil {
		if err := d.divertRefused(err); err != nil {
			return nil, err
		}
		d.log.Warn("XDP fast path off: serving on the socket path only", "interfaces", c.Interfaces, "err", err)
		return nil, nil
	}
	if err := d.udp.SetLimits(lim); err != nil {
		closePart(f)
		return nil, err
	}
	d.xdp = f
	d.log.Info("XDP fast path on: the socket path and the program each get half of [limits]",
		"per_ip_rate", lim.PerIPRate, "per_ip_burst", lim.PerIPBurst, "unproven_rate", lim.UnprovenRate, "unproven_burst", lim.UnprovenBurst)
	d.udp.AddCounts(f)
	f.SetProtocols(protocolsOf(d.protos))
	return f, nil
}

// xdpModes are [xdp] mode's values as package xdp names them (config
// cannot import xdp: the protocol packages' config types import config,
// and xdp's tests import the protocol packages).
var xdpModes = map[config.XDPMode]xdp.Mode{config.XDPNative: xdp.ModeNative, config.XDPGeneric: xdp.ModeGeneric}

// protocolsOf returns the live handlers.
func protocolsOf(protos []live) []module.Protocol {
	out := make([]module.Protocol, len(protos))
	for i, p := range protos {
		out[i] = p.proto
	}
	return out
}

// shareLimits is each path's share of the budgets while the fast path is
// attached: half of [limits] (a burst at least one datagram, 1,500 bytes),
// so that one source, or every unproven source together, draws from the
// socket path and the program together no more than [limits] allows (the
// two keep their buckets apart: a source whose queries go partly to each
// would otherwise draw two budgets).
func shareLimits(l responder.Limits) responder.Limits {
	if l == (responder.Limits{}) {
		l = responder.DefaultLimits
	}
	l.PerIPRate = max(l.PerIPRate/2, 1)
	l.PerIPBurst = max(l.PerIPBurst/2, 1500)
	l.UnprovenRate = max(l.UnprovenRate/2, 1)
	l.UnprovenBurst = max(l.UnprovenBurst/2, 1500)
	return l
}

// pathLimits are the budgets of each path for config c: [limits], or its
// half while the fast path is attached.
func (d *Daemon) pathLimits(c *config.Config) responder.Limits {
	if d.xdp != nil {
		return shareLimits(limitsOf(c))
	}
	return limitsOf(c)
}

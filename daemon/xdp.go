package daemon

import (
	"time"

	"github.com/queryd/queryd/module"
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
	f, err := xdp.New(xdp.Config{
		Interfaces: c.Interfaces,
		Mode:       string(c.Mode),
		Listen:     d.udp.Addrs(),
		Issuer:     d.issuer,
		Limits:     limitsOf(d.cfg),
		LastFed:    d.feed.LastFed,
		StaleAfter: time.Duration(d.cfg.Feed.StaleAfter),
		Logger:     d.log.With("part", "xdp"),
		Registry:   d.reg,
	})
	if err != nil {
		d.log.Warn("XDP fast path off: serving on the socket path only", "interfaces", c.Interfaces, "err", err)
		return nil, nil
	}
	d.xdp = f
	d.udp.AddCounts(f)
	f.SetProtocols(protocolsOf(d.protos))
	return f, nil
}

// protocolsOf returns the live handlers.
func protocolsOf(protos []live) []module.Protocol {
	out := make([]module.Protocol, len(protos))
	for i, p := range protos {
		out[i] = p.proto
	}
	return out
}

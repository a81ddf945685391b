package daemon

import (
	"context"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/relay"
	"github.com/queryd/queryd/responder"
)

// newRelay makes the relay when [relay] upstream is set (nil otherwise).
func (d *Daemon) newRelay() (part, error) {
	rc := d.cfg.Relay
	if rc.Upstream == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	up, err := d.cfg.RelayUpstream(ctx)
	if err != nil {
		return nil, err
	}
	r, err := relay.New(relay.Config{
		Upstream:    up,
		IdleTimeout: rc.Idle(),
		MaxSessions: rc.Sessions(),
		MaxPerIP:    rc.MaxSessionsPerIP,
		OpenRate:    relayOpenRate(rc.OpenRate),
		OpenBurst:   rc.OpenBurst,
		Logger:      d.log.With("part", "relay"),
		Registry:    d.reg,
	})
	if err != nil {
		return nil, err
	}
	d.relay = r
	d.log.Info("relay mode", "upstream", r.Upstream())
	return bgPart{name: "relay", stop: r.Close}, nil
}

// relayOpenRate maps [relay] open_rate = 0 (no limit) to the relay's -1.
func relayOpenRate(r float64) float64 {
	if r == 0 {
		return -1
	}
	return r
}

// newUDP opens the UDP sockets with the modules' handlers.
func (d *Daemon) newUDP() (part, error) {
	protos, err := d.buildProtocols(d.cfg)
	if err != nil {
		return nil, err
	}
	c := d.cfg
	rc := responder.Config{
		Listen:     addrStrings(c.Listen.UDP),
		Socket:     string(c.Listen.Socket),
		Workers:    c.Listen.Workers,
		RecvBuffer: int(c.Listen.RecvBuffer),
		DisableGSO: !c.Listen.GSO,
		Limits:     limitsOf(c),
		Deny:       c.Limits.DenyList(),
		Silent:     d.stale,
		Clock:      d.clock,
		Logger:     d.log.With("part", "udp"),
		Registry:   d.reg,
	}
	if d.relay != nil {
		rc.Forward = d.relay
	}
	if d.udp, err = responder.New(rc); err != nil {
		return nil, err
	}
	d.swapProtocols(protos)
	if err := d.udp.Listen(); err != nil {
		return nil, err
	}
	return bgPart{name: "udp", start: d.udp.Start, stop: d.udp.Close}, nil
}

func addrStrings(aps config.AddrPorts) []string {
	out := make([]string, len(aps))
	for i, ap := range aps {
		out[i] = ap.String()
	}
	return out
}

func limitsOf(c *config.Config) responder.Limits {
	return responder.Limits{
		PerIPRate:     int(c.Limits.PerIPRate),
		PerIPBurst:    int(c.Limits.PerIPBurst),
		UnprovenRate:  int(c.Limits.UnprovenRate),
		UnprovenBurst: int(c.Limits.UnprovenBurst),
		TrackedIPs:    c.Limits.TrackedIPs,
	}
}

var _ responder.Forwarder = (*relay.Relay)(nil)

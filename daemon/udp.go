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
	cfg := rc.RelayConfig(up)
	cfg.Logger, cfg.Registry = d.log.With("part", "relay"), d.reg
	r, err := relay.New(cfg)
	if err != nil {
		return nil, err
	}
	d.relay = r
	d.log.Info("relay mode", "upstream", r.Upstream())
	return bgPart{name: "relay", stop: r.Close}, nil
}

// newUDP opens the UDP sockets with the modules' handlers.
func (d *Daemon) newUDP() (part, error) {
	protos, err := d.buildProtocols(d.cfg)
	if err != nil {
		return nil, err
	}
	c := d.cfg
	rc := responder.Config{
		Listen:     listenOf(c),
		Socket:     string(c.Listen.Socket),
		Workers:    c.Listen.Workers,
		RecvBuffer: int(c.Listen.RecvBuffer),
		DisableGSO: !c.Listen.GSO,
		Limits:     limitsOf(c),
		Deny:       c.Limits.DenyList(),
		Silent:     d.silence.silent,
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

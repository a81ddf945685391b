package daemon

import (
	"context"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/relay"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sleep"
)

// newRelay makes the relay when [relay] upstream is set (nil otherwise).
func (s *Server) newRelay() (part, error) {
	rc := s.cfg.Relay
	if rc.GameServer == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	up, err := s.cfg.RelayGameServer(ctx)
	if err != nil {
		return nil, err
	}
	cfg := rc.RelayConfig(up)
	cfg.Logger, cfg.Registry = s.log.With("part", "relay"), s.reg
	cfg.Pass = passLimits(s.host.opts.Modules, s.cfg)
	r, err := relay.New(cfg)
	if err != nil {
		return nil, err
	}
	s.relay = r
	s.log.Info("relay mode", "upstream", r.GameServer())
	return bgPart{name: "relay", stop: r.Close}, nil
}

// newUDP opens the UDP sockets with the modules' handlers.
func (s *Server) newUDP() (part, error) {
	protos, err := s.buildProtocols(s.cfg)
	if err != nil {
		return nil, err
	}
	c := s.cfg
	rc := responder.Config{
		Listen:     listenOf(c),
		Socket:     c.Listen.Socket,
		Workers:    c.Listen.Workers,
		RecvBuffer: int(c.Listen.RecvBuffer),
		DisableGSO: !c.Listen.GSO,
		Limits:     limitsOf(c),
		Host:       s.host.budget,
		Deny:       c.Limits.DenyList(),
		Silent:     s.silence.silent,
		Clock:      s.host.clock,
		Logger:     s.log.With("part", "udp"),
		Registry:   s.reg,
	}
	switch {
	case s.sleep != nil && s.relay != nil:
		rc.Forward = s.sleep // holds what comes while the game server sleeps or wakes
	case s.relay != nil:
		rc.Forward = s.relay
	}
	st := s.newSteer(c)
	if st != nil {
		sd := &steered{st: st}
		sd.register(s.reg)
		rc.Steer, rc.OnProven = sd.attach, st.Prove
	}
	if s.udp, err = responder.New(rc); err != nil {
		st.Close()
		return nil, err
	}
	s.swapProtocols(protos)
	if err := s.udp.Listen(); err != nil {
		st.Close()
		return nil, err
	}
	stop := func() error {
		err := s.udp.Close()
		st.Close()
		return err
	}
	return bgPart{name: "udp", start: s.udp.Start, stop: stop}, nil
}

func limitsOf(c *config.Config) responder.Limits {
	return responder.Limits{
		PerIPRate:     int(c.Limits.PerIPRate),
		PerIPBurst:    int(c.Limits.PerIPBurst),
		UnprovenRate:  int(c.Limits.UnprovenRate),
		UnprovenBurst: int(c.Limits.UnprovenBurst),
		TrackedIPs:    c.Limits.TrackedIPs,

		UnprovenPacketRate:  c.Limits.UnprovenPacketRate,
		UnprovenPacketBurst: c.Limits.UnprovenPacketBurst,
		ProvenFor:           time.Duration(c.Limits.ProvenFor),
	}
}

var (
	_ responder.Forwarder = (*relay.Relay)(nil)
	_ responder.Forwarder = (*sleep.Sleeper)(nil)
)

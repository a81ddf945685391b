package daemon

import (
	"fmt"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/xdp"
)

// newXDP loads and attaches the XDP fast path when [xdp] interfaces is set:
// one program for every server of the host, keyed by destination (each
// server's listen addresses), answering each from its own replies, tokens
// and budgets. It never fails the start: when the kernel refuses (no
// CAP_BPF or CAP_NET_ADMIN, no XDP, an unknown interface), queryd logs why
// and serves on the socket path. It runs as a host part, started after the
// servers and stopped before them.
func (d *Daemon) newXDP() (part, error) {
	c := d.main.XDP
	if len(c.Interfaces) == 0 {
		return nil, nil
	}
	servers := d.running()
	f, err := xdp.New(xdp.Config{
		Interfaces: c.Interfaces,
		Mode:       xdpModes[c.Mode],
		Issuer:     d.issuer,
		Logger:     d.log.With("part", "xdp"),
		Registry:   d.reg,
		Servers:    xdpServers(servers),
		Host:       d.main.HostBudget().Share(2),
	})
	if err != nil {
		if !d.multi.Load() {
			if err := anyDivertRefused(servers, err); err != nil {
				return nil, err
			}
		} else if err := d.refuseDivert(servers, err); err != nil {
			return nil, err
		}
		d.log.Warn("XDP fast path off: serving on the socket path only", "interfaces", c.Interfaces, "err", err)
		return nil, nil
	}
	refused := map[*Server]error{}
	for _, s := range servers {
		if err := s.attachFast(f); err != nil {
			if !d.multi.Load() || len(s.config().Listen.Divert) == 0 {
				closePart(f)
				return nil, err
			}
			refused[s] = err
		}
	}
	if len(refused) > 0 { // a host of several: those servers down, the others run
		d.downed(refused)
		if len(d.running()) == 0 {
			closePart(f)
			for _, err := range refused {
				return nil, err
			}
		}
		if err := f.SetServers(xdpServers(d.running())); err != nil {
			d.log.Error("XDP fast path: servers", "err", err)
		}
	}
	d.fast = f
	if err := d.budget.SetLimits(d.hostShare(d.main.HostBudget())); err != nil {
		d.log.Error("XDP fast path: the socket path keeps all of [host]", "err", err)
	}
	d.log.Info("XDP fast path on: the socket path and the program each get half of each server's [limits] and of [host]", "servers", len(servers))
	return f, nil
}

// xdpServers are the servers' shares of the program.
func xdpServers(servers []*Server) []xdp.Server {
	out := make([]xdp.Server, len(servers))
	for i, s := range servers {
		out[i] = s.xdpServer()
	}
	return out
}

// xdpServer is the server's share of the program: its bound addresses, its
// half of [limits], its deny list, its silence and its series.
func (s *Server) xdpServer() xdp.Server {
	c := s.config()
	return xdp.Server{
		Name:       s.name,
		Listen:     s.udp.Addrs(),
		Limits:     shareLimits(limitsOf(c)),
		Deny:       c.Limits.DenyList(),
		SilentFrom: s.silence.from,
		Registry:   s.reg,
	}
}

// attachFast makes f answer for the server (SetServers has added it): its
// socket path takes the other half of [limits], counts the program's
// answers for it with its own, and the program gets its protocols.
func (s *Server) attachFast(f *xdp.FastPath) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.udp.SetLimits(shareLimits(limitsOf(s.cfg))); err != nil {
		return fmt.Errorf("server %s: %w", s.name, err)
	}
	s.fast = f
	s.udp.AddCounts(f.CountsOf(s.name))
	f.SetProtocols(s.name, protocolsOf(s.protos))
	return s.attachDivert(f)
}

// fastSources hands over the sources the program answered or dropped for
// the server (the status page's busiest sources); none without it.
func (s *Server) fastSources(dst []responder.SourceCount) []responder.SourceCount {
	if s.fast == nil {
		return dst
	}
	return s.fast.DrainServerSources(s.name, dst)
}

// setFastServers makes servers the program's (reloadMu held): added ones
// attached, removed ones' frames passed to the socket path. It returns
// the added servers with [listen] divert that could not take it (without
// the fast path, all of them), each with why: they must not start.
func (d *Daemon) setFastServers(servers []*Server) map[*Server]error {
	refused := map[*Server]error{}
	if d.fast == nil {
		for _, s := range servers {
			if err := divertRefused(s.config(), errNoFastPath); err != nil && s.divert == nil {
				refused[s] = err
			}
		}
		return refused
	}
	if err := d.fast.SetServers(xdpServers(servers)); err != nil {
		d.log.Error("XDP fast path: servers", "err", err)
	}
	for _, s := range servers {
		if s.fast == nil {
			if err := s.attachFast(d.fast); err != nil {
				s.log.Error("XDP fast path: server not attached", "err", err)
				if len(s.config().Listen.Divert) > 0 {
					refused[s] = err
				}
			}
		}
	}
	return refused
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
	l.PerIPRate, l.PerIPBurst = responder.SplitBudget(l.PerIPRate, l.PerIPBurst, 2)
	l.UnprovenRate, l.UnprovenBurst = responder.SplitBudget(l.UnprovenRate, l.UnprovenBurst, 2)
	l.UnprovenPacketRate, l.UnprovenPacketBurst = responder.SplitPackets(l.UnprovenPacketRate, l.UnprovenPacketBurst, 2)
	return l
}

// pathLimits are the budgets of each path for config c: [limits], or its
// half while the fast path is attached.
func (s *Server) pathLimits(c *config.Config) responder.Limits {
	if s.fast != nil {
		return shareLimits(limitsOf(c))
	}
	return limitsOf(c)
}

// refuseDivert, for a host of several servers started without the fast
// path (why), stops the servers with [listen] divert and reports them down;
// it fails only when no server is left.
func (d *Daemon) refuseDivert(servers []*Server, why error) error {
	refused := map[*Server]error{}
	for _, s := range servers {
		if err := divertRefused(s.config(), why); err != nil {
			refused[s] = fmt.Errorf("server %s: %w", s.name, err)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	d.downed(refused)
	if len(d.running()) == 0 {
		for _, err := range refused {
			return err
		}
	}
	return nil
}

// downed stops the servers of refused (made, not started) at the host's
// start and reports each down with its reason.
func (d *Daemon) downed(refused map[*Server]error) {
	d.mu.Lock()
	d.servers = without(d.servers, refused)
	for s, err := range refused {
		d.down = append(d.down, downServer{name: s.name, path: s.path, err: err, why: downStart})
	}
	d.mu.Unlock()
	for s, err := range refused {
		s.log.Error("server cannot start", "file", s.path, "err", err)
		s.remove()
	}
}

package daemon

import (
	"fmt"
	"io"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
)

// env is what module name may use, for the config c.
func (s *Server) env(c *config.Config, name string) module.Env {
	e := module.Env{
		Issuer:    s.host.issuer,
		Now:       s.host.clock.Now,
		Log:       s.log.With("protocol", name),
		Registry:  s.reg,
		Listen:    gameListen(c),
		Base:      c.ServerDoc,
		Subscribe: s.store.Subscribe,
		Silent:    s.silence.silent,
	}
	if s.udp != nil {
		e.SendTo = s.udp.SendTo
	}
	if s.relay != nil {
		e.RelayGameServer = s.relay.GameServer()
	}
	return e
}

// buildProtocols makes the enabled modules' handlers for c, in demux order.
func (s *Server) buildProtocols(c *config.Config) ([]live, error) {
	var out []live
	for _, m := range s.host.opts.Modules {
		sec := c.Section(m.Name())
		if sec == nil || !sec.On() {
			continue
		}
		p, err := m.Build(sec, s.env(c, m.Name()))
		if err != nil {
			closeProtocols(out)
			return nil, fmt.Errorf("[%s]: %w", m.Name(), err)
		}
		out = append(out, live{name: m.Name(), proto: p})
	}
	return out, nil
}

// swapProtocols makes protos the live handlers: they are subscribed to the
// store (and so encoded for the current snapshot) before the responder
// uses them; the handlers they replace are closed.
func (s *Server) swapProtocols(protos []live) {
	unsub := s.store.Subscribe(func(snap *state.Snapshot) {
		for _, p := range protos {
			p.proto.Update(snap)
		}
		if s.fast != nil {
			s.fast.Changed(s.name) // after the updates: it reads the new replies
		}
	})
	hs := make([]responder.Handler, len(protos))
	for i, p := range protos {
		hs[i] = p.proto
	}
	s.udp.SetHandlers(hs...)
	if s.fast != nil {
		s.fast.SetProtocols(s.name, protocolsOf(protos))
	}
	if s.unsub != nil {
		s.unsub()
	}
	old := s.protos
	s.protos, s.unsub = protos, unsub
	closeProtocols(old)
}

// closeProtocols stops what handlers run in the background (a logo
// loader) once they are no longer subscribed.
func closeProtocols(protos []live) {
	for _, p := range protos {
		if c, ok := p.proto.(io.Closer); ok {
			c.Close()
		}
	}
}

// current returns a function giving the live handler of module name (nil
// while it is disabled).
func (s *Server) current(name string) func() module.Protocol {
	return func() module.Protocol {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, p := range s.protos {
			if p.name == name {
				return p.proto
			}
		}
		return nil
	}
}

// newServices makes the modules' services (once, at start). Every
// Servicer is asked, enabled or not: a module may run a service while its handler is
// off (Quake 3's heartbeats in relay mode), and decides so itself.
func (s *Server) newServices() ([]part, error) {
	var out []part
	for _, m := range s.host.opts.Modules {
		sec := s.cfg.Section(m.Name())
		if sec == nil {
			continue
		}
		sm, ok := m.(Servicer)
		if !ok {
			continue
		}
		svcs, err := sm.Services(sec, s.env(s.cfg, m.Name()), s.current(m.Name()))
		for _, sv := range svcs {
			out = append(out, sv)
		}
		if err != nil {
			return out, fmt.Errorf("[%s]: %w", m.Name(), err)
		}
	}
	return out, nil
}

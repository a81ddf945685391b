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
func (d *Daemon) env(c *config.Config, name string) module.Env {
	e := module.Env{
		Issuer:    d.issuer,
		Now:       d.clock.Now,
		Log:       d.log.With("protocol", name),
		Registry:  d.reg,
		Listen:    gameListen(c),
		Base:      c.ServerDoc,
		Subscribe: d.store.Subscribe,
		Stale:     d.silence.silent,
	}
	if d.udp != nil {
		e.SendTo = d.udp.SendTo
	}
	if d.relay != nil {
		e.RelayUpstream = d.relay.Upstream()
	}
	return e
}

// buildProtocols makes the enabled modules' handlers for c, in demux order.
func (d *Daemon) buildProtocols(c *config.Config) ([]live, error) {
	var out []live
	for _, m := range d.opts.Modules {
		sec := c.Section(m.Name())
		if sec == nil || !sec.On() {
			continue
		}
		p, err := m.Build(sec, d.env(c, m.Name()))
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
func (d *Daemon) swapProtocols(protos []live) {
	unsub := d.store.Subscribe(func(s *state.Snapshot) {
		for _, p := range protos {
			p.proto.Update(s)
		}
		if d.xdp != nil {
			d.xdp.Changed() // after the updates: it reads the new replies
		}
	})
	hs := make([]responder.Handler, len(protos))
	for i, p := range protos {
		hs[i] = p.proto
	}
	d.udp.SetHandlers(hs...)
	if d.xdp != nil {
		d.xdp.SetProtocols(protocolsOf(protos))
	}
	d.divertProtocols(protos)
	if d.unsub != nil {
		d.unsub()
	}
	old := d.protos
	d.protos, d.unsub = protos, unsub
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
func (d *Daemon) current(name string) func() module.Protocol {
	return func() module.Protocol {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, p := range d.protos {
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
func (d *Daemon) newServices() ([]part, error) {
	var out []part
	for _, m := range d.opts.Modules {
		sec := d.cfg.Section(m.Name())
		if sec == nil {
			continue
		}
		sm, ok := m.(Servicer)
		if !ok {
			continue
		}
		svcs, err := sm.Services(sec, d.env(d.cfg, m.Name()), d.current(m.Name()))
		for _, s := range svcs {
			out = append(out, s)
		}
		if err != nil {
			return out, fmt.Errorf("[%s]: %w", m.Name(), err)
		}
	}
	return out, nil
}

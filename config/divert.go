package config

import (
	"fmt"
	"slices"

	"github.com/BurntSushi/toml"

	"github.com/queryd/queryd/internal/nearest"
)

// MaxDivert bounds [listen] divert (the XDP program's divert table holds
// 64 for every server of a host).
const MaxDivert = 8

// divertNeeds is what divert needs, for the errors and `queryd check`.
// The kernels are xdp.KernelXDP and xdp.KernelTCX (a test holds them
// equal).
const divertNeeds = "divert needs [xdp] interfaces (the interfaces its queries arrive on), " +
	"CAP_BPF and CAP_NET_ADMIN (or root) and Linux 5.18 or later (its egress program attaches through tcx from 6.6, " +
	"as a tc clsact filter before); without them, front the game server in relay mode ([relay] upstream), which needs none of them"

// validateDivert checks [listen] divert: specific addresses (the game
// server's, where clients send), none also in [listen] udp, [xdp]
// interfaces set, not with relay mode.
func (c *Config) validateDivert(errs *Errors) {
	d := c.Listen.Divert
	if len(d) == 0 {
		if len(c.Listen.DivertProtocols) > 0 {
			errs.Add("listen.divert_protocols", "only with [listen] divert")
		}
		return
	}
	if len(d) > MaxDivert {
		errs.Add("listen.divert", "at most %d addresses, got %d", MaxDivert, len(d))
	}
	for i, ap := range d {
		k := fmt.Sprintf("listen.divert[%d]", i)
		switch {
		case ap.Addr().IsUnspecified() || ap.Port() == 0:
			errs.Add(k, "want the game server's own address and port, such as \"203.0.113.5:27015\" (not a wildcard, not port 0), got %q", ap)
		case ap.Addr().Is4In6():
			errs.Add(k, "write an IPv4 address as a.b.c.d, got %q", ap)
		}
		for _, u := range c.Listen.UDP {
			if u.Port() == ap.Port() && (u.Addr() == ap.Addr() || u.Addr().IsUnspecified()) {
				errs.Add(k, "%q is also in [listen] udp (%q): the game server holds a divert port, queryd does not bind it", ap, u)
			}
		}
	}
	if len(c.XDP.Interfaces) == 0 {
		errs.Add("listen.divert", "%s", divertNeeds)
	}
	if c.Relay.GameServer != "" {
		errs.Add("listen.divert", "not with [relay] upstream: divert leaves the game server its port, relay mode takes it; pick one")
	}
	c.validateDivertProtocols(errs)
}

// validateDivertProtocols checks [listen] divert_protocols: names of
// protocol modules that are on, once each; without it, the [upstream]
// protocol (the default) must be on.
func (c *Config) validateDivertProtocols(errs *Errors) {
	ps := c.Listen.DivertProtocols
	if len(ps) == 0 {
		if p := string(c.Upstream.Protocol); p != "" && c.Section(p) != nil && !c.Section(p).On() {
			errs.Add("listen.divert", "divert takes the [upstream] protocol's queries (%q) unless divert_protocols lists others, and [%s] is off: turn it on or list the protocols to take", p, p)
		}
		return
	}
	var names []string
	for _, s := range c.Modules {
		names = append(names, s.Name)
	}
	for i, p := range ps {
		k := fmt.Sprintf("listen.divert_protocols[%d]", i)
		switch sec := c.Section(p); {
		case sec == nil:
			errs.Add(k, "%q: no protocol is named so%s", p, nearest.Hint(p, names))
		case !sec.On():
			errs.Add(k, "%q: [%s] is off (enabled = false): divert takes queries of protocols that answer", p, p)
		case slices.Index(ps, p) < i:
			errs.Add(k, "%q is listed twice", p)
		}
	}
}

// DivertTakes is the protocols whose queries [listen] divert takes (every
// other datagram reaches the game server): divert_protocols when set, else
// the [upstream] protocol alone (the game server's own), else nil: every
// protocol that is on (the state comes from a feed, queryd cannot know the
// game's protocol).
func (c *Config) DivertTakes() []string {
	if len(c.Listen.DivertProtocols) > 0 {
		return slices.Clone(c.Listen.DivertProtocols)
	}
	if c.Upstream.On() {
		return []string{string(c.Upstream.Protocol)}
	}
	return nil
}

// DivertNeeds is what [listen] divert needs of the host (`queryd check`
// and a refused start say it).
func DivertNeeds() string { return divertNeeds }

// divertOnly drops the default [listen] udp when [listen] divert is set
// and udp is not: queryd then binds no public port of its own.
func (c *Config) divertOnly(md toml.MetaData) {
	if len(c.Listen.Divert) > 0 && !md.IsDefined("listen", "udp") {
		c.Listen.UDP = nil
	}
}

// divertWarnings says, for `queryd check`, what divert needs at start
// that a config cannot show: the privileges and the kernel.
func (c *Config) divertWarnings() []string {
	if len(c.Listen.Divert) == 0 {
		return nil
	}
	return []string{"listen.divert: queryd refuses to start unless the XDP fast path attaches: " + divertNeeds}
}

// divertHostErrors is errs of a server file (parsed without [xdp], which
// is host-wide) with the [xdp] check made against the main file's instead:
// host mode lays the main file's [xdp] over each server's after the parse.
func (c *Config) divertHostErrors(errs Errors, main *Config, mainPath string) Errors {
	if len(c.Listen.Divert) == 0 {
		return errs
	}
	out := errs[:0:0]
	for _, e := range errs {
		if e.Key == "listen.divert" && e.Reason == divertNeeds {
			continue
		}
		out = append(out, e)
	}
	if len(main.XDP.Interfaces) == 0 {
		out.Add("listen.divert", "%s (in the main file %s: [xdp] is host-wide)", divertNeeds, fileLabel(mainPath))
	}
	return out
}

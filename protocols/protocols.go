// Package protocols holds the one ordered list of queryd's protocol
// modules: the registration list. queryd runs it (cmd/queryd), and the
// tests that must cover every protocol (config's, hostile/'s) derive their
// lists from it, so that a new protocol is one package plus one line here
// and nothing else to edit by hand.
//
// The state's sources that are not protocols (the Agones SDK server's
// [agones]) are the daemon's: daemon.ConfigModules adds their config
// tables to these.
package protocols

import (
	"context"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/sagl"
	"github.com/queryd/queryd/sqp"
)

// Module is a protocol module as queryd uses it: its config section
// (config.Module), the handler the daemon builds from it (daemon.Module
// is these two), and its client side for `queryd query`.
type Module interface {
	config.Module
	// Build makes the module's handler for its enabled section.
	Build(sec config.Section, env module.Env) (module.Protocol, error)
	// Query asks addr the protocol's whole query within ctx.
	Query(ctx context.Context, addr string, opts module.QueryOptions) (module.Answer, error)
	// Probe is the protocol's first request, for the round trip and the
	// diagnosis of a failure.
	Probe() module.Probe
}

// List returns queryd's protocol modules in demux order (the first that
// claims a datagram answers it), a fresh slice for each call. A new
// protocol is one package implementing Module, plus a line here.
func List() []Module {
	return []Module{
		a2s.Module{},
		gamespy4.Module{},
		sagl.Module{},
		quake3.Module{},
		bedrock.Module{},
		sqp.Module{},
	}
}

// Names returns the modules' names ("a2s", …), in List's order: their
// config tables and the `-proto` values of `queryd query`.
func Names() []string {
	var out []string
	for _, m := range List() {
		out = append(out, m.Name())
	}
	return out
}

// ConfigModules returns the modules as config.Parse takes them.
func ConfigModules() []config.Module {
	var out []config.Module
	for _, m := range List() {
		out = append(out, m)
	}
	return out
}

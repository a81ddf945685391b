package daemon

import (
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/module"
)

// Module is a protocol module as the daemon uses it: its config section
// (config.Module) and the handler it builds from that section. Build runs
// at start and again on every reload (it must not register metrics). A
// module that runs services beside the responder is also a Servicer.
type Module interface {
	config.Module
	// Build makes the module's handler for its enabled section.
	Build(sec config.Section, env module.Env) (module.Protocol, error)
}

// Servicer is the optional capability of a module that runs services
// beside the responder (SAGL's HTTP listener, Quake 3's master
// heartbeats), found by type assertion as config's Warner and Restarter
// are. Services runs once, at start, for every such module, enabled or not:
// a module returns none for a disabled section, unless a service of its
// own must run without its handler (Quake 3's heartbeats in relay mode).
// current returns the module's live handler, which a reload may replace or
// turn off (nil).
type Servicer interface {
	Services(sec config.Section, env module.Env, current func() module.Protocol) ([]module.Service, error)
}

// Claimer is the optional capability of a module that says which
// datagrams are its queries, whether its section is on or off (every
// protocol module's Claims): such a datagram never wakes a sleeping server
// ([sleep]), even when the protocol is off and its queries are relayed to
// the game server while it runs.
type Claimer interface {
	Claims(p []byte) bool
}

// Heartbeater is the optional capability of a module whose services send
// master heartbeats (Quake 3's): it names their metrics, which the status
// page's heartbeats card reads, so that the page names no protocol.
type Heartbeater interface {
	HeartbeatMetrics() module.HeartbeatMetrics
}

// heartbeatMetrics are the first Heartbeater's metrics among mods (the
// zero value: none, no card).
func heartbeatMetrics(mods []Module) module.HeartbeatMetrics {
	for _, m := range mods {
		if h, ok := m.(Heartbeater); ok {
			return h.HeartbeatMetrics()
		}
	}
	return module.HeartbeatMetrics{}
}

package daemon

import (
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/module"
)

// Module is a protocol module as the daemon uses it: its config section
// (config.Module), the handler it builds from that section, and the
// services it runs beside the responder. Build runs at start and again on
// every reload (it must not register metrics); Services runs once, at
// start, for every module, enabled or not.
type Module interface {
	config.Module
	// Build makes the module's handler for its enabled section.
	Build(sec config.Section, env module.Env) (module.Protocol, error)
	// Services makes the parts the module runs beside the responder (nil:
	// none). It is called for a disabled section too: a module returns
	// none then, unless a service of its own must run without its handler
	// (Quake 3's master heartbeats in relay mode). current returns the
	// module's live handler, which a reload may replace or turn off (nil).
	Services(sec config.Section, env module.Env, current func() module.Protocol) ([]module.Service, error)
}

package daemon

import (
	"github.com/queryd/queryd/config"
)

// Reload reads the config file again. A config that fails to load (or
// whose [server] does not fit the fed state) is logged and the running one
// kept. [server], [limits] and the protocol sections take effect; what
// config.RestartKeys names — [listen], [feed], [admin], [relay], [upstream],
// [log], [xdp] and the modules' restart keys — needs a restart (the log says
// which). The HTTP feed's token file is read again, whatever the config.
func (d *Daemon) Reload() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reloadFeedToken()
	if d.opts.Path == "" {
		d.log.Info("SIGHUP: running on the embedded config; nothing to reload")
		return
	}
	nc, err := config.Load(d.opts.Path, modulesOf(d.opts.Modules)...)
	if err != nil {
		d.log.Error("SIGHUP: config rejected; keeping the running one", "err", err)
		return
	}
	if why, err := FitDescriptors(nc); err == nil && why != "" {
		d.log.Warn("SIGHUP: " + why)
	}
	protos, err := d.buildProtocols(nc)
	if err != nil {
		d.log.Error("SIGHUP: config rejected; keeping the running one", "err", err)
		return
	}
	if err := d.store.SetBase(nc.ServerDoc); err != nil {
		closeProtocols(protos)
		d.log.Error("SIGHUP: [server] does not fit the fed state; keeping the running config", "err", err)
		return
	}
	if err := d.udp.SetLimits(d.pathLimits(nc)); err != nil {
		d.log.Error("SIGHUP: limits rejected", "err", err)
	} else if d.xdp != nil {
		d.xdp.SetLimits(xdpServer, d.pathLimits(nc))
	}
	d.udp.SetDeny(nc.Limits.DenyList())
	if d.xdp != nil {
		d.xdp.SetDeny(xdpServer, nc.Limits.DenyList())
	}
	d.swapProtocols(protos)
	for _, k := range nc.RestartKeys(d.cfg) {
		d.log.Warn("SIGHUP: change needs a restart to take effect", "key", k)
	}
	d.cfg = nc
	names := make([]string, len(protos))
	for i, p := range protos {
		names[i] = p.name
	}
	d.log.Info("SIGHUP: config reloaded", "protocols", names)
}

// modulesOf returns the modules as the config sees them.
func modulesOf(mods []Module) []config.Module {
	out := make([]config.Module, len(mods))
	for i, m := range mods {
		out[i] = m
	}
	return out
}

package daemon

import (
	"github.com/queryd/queryd/config"
)

// Reload reads the config files again. A main file that fails to load is
// logged and every running config kept. Then each server file applies on
// its own: a new one starts that server, a removed one stops it (its
// services' flatline, its sockets closed), a changed one reloads as below,
// and one that fails to load keeps that server's running config (logged;
// /healthz names it while it did not start). In a host of several servers
// ([servers]), a server whose change needs a restart ([listen], [feed],
// [relay], [upstream], a module's restart key) is restarted alone: stopped
// as if removed, then started on its new config, with no state until it is
// fed again (or its game server polled); one that cannot start is down,
// named by /healthz. The host's own tables still need the process
// restarted, but [host], which applies at once (the sources' state kept
// when it did not change).
//
// A server's reload: a config that fails to load (or whose [server] does
// not fit the fed state) is logged and the running one kept. [server],
// [limits] and the protocol sections take effect; what config.RestartKeys
// names — [listen], [feed], [admin], [relay], [upstream], [log], [xdp] and
// the modules' restart keys — needs a restart (the log says which). The
// HTTP feed's token file is read again, whatever the config.
//
// What runs keeps what it holds (config.ReloadHost): a new or changed file
// whose address or feed socket a running server holds, or that has a
// running server's name but another path, is refused (down), never the
// running server; a server is its name and its file together, so removing
// a file stops exactly the server it started. The daemon refuses a second
// server on an address one holds in any case (holds).
func (d *Daemon) Reload() {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	for _, s := range d.running() {
		s.reloadFeedToken()
	}
	if d.opts.Path == "" {
		d.log.Info("SIGHUP: running on the embedded config; nothing to reload")
		return
	}
	spec, err := d.loadSpec()
	if err != nil {
		d.log.Error("SIGHUP: config rejected; keeping the running one", "err", err)
		return
	}
	d.setHostBudget(spec.main)
	d.apply(spec)
}

// apply makes the running servers spec's (reloadMu held).
func (d *Daemon) apply(spec *hostSpec) {
	if spec.multi {
		d.multi.Store(true)
	}
	running := map[string]*Server{}
	for _, s := range d.running() {
		running[s.name] = s
	}
	// ownFile is the running server that file path of server name started
	// (nil: none): a server is its name and its file together.
	ownFile := func(name, path string) *Server {
		if s := running[name]; s != nil && s.path == path {
			return s
		}
		return nil
	}
	named := map[*Server]bool{}
	var next, fresh []*Server
	var down []downServer
	for _, f := range spec.failed {
		if s := ownFile(f.name, f.path); s != nil {
			named[s] = true
			s.log.Error("SIGHUP: server file rejected; keeping its running config", "err", f.err)
			continue
		}
		d.log.Error("SIGHUP: server file refused: server not started", "server", f.name, "file", f.path, "err", f.err)
		down = append(down, f)
	}
	for _, ss := range spec.servers {
		if s := running[ss.name]; s != nil && s.path != ss.path {
			// another file now has the name (config.ReloadHost refuses that
			// while the first file is there): the old server goes with its file
			s.log.Info("SIGHUP: the server's file is gone; another file has its name", "file", s.path, "new", ss.path)
			s.remove()
			delete(running, ss.name)
		}
		if s := ownFile(ss.name, ss.path); s != nil {
			named[s] = true
			keys := ownRestartKeys(ss.cfg, s.config())
			if !spec.multi || len(keys) == 0 {
				s.reload(ss.cfg, len(spec.servers))
				next = append(next, s)
				continue
			}
			s.log.Info("SIGHUP: restarting the server for its changed config", "keys", keys)
			s.remove() // its sockets and feed closed before the new config binds them
		}
		if why, err := fitShare(ss.cfg, len(spec.servers)); err == nil && why != "" {
			d.log.Warn("SIGHUP: server " + ss.name + ": " + why)
		}
		s, err := d.newServer(ss.name, ss.path, ss.cfg)
		if err != nil {
			d.log.Error("SIGHUP: server cannot start", "server", ss.name, "file", ss.path, "err", err)
			down = append(down, downServer{name: ss.name, path: ss.path, err: err, why: downStart})
			continue
		}
		next = append(next, s)
		fresh = append(fresh, s)
	}
	for _, f := range spec.failed { // kept running on their last good config
		if s := ownFile(f.name, f.path); s != nil {
			next = append(next, s)
		}
	}
	var gone []*Server
	for _, s := range running {
		if !named[s] {
			gone = append(gone, s)
		}
	}
	// the new ones attached before they start; the removed ones' frames
	// (and divert addresses) pass before their sockets close
	if refused := d.setFastServers(next); len(refused) > 0 {
		next, fresh = without(next, refused), without(fresh, refused)
		for s, err := range refused {
			s.log.Error("SIGHUP: server cannot start", "file", s.path, "err", err)
			s.remove()
			down = append(down, downServer{name: s.name, path: s.path, err: err, why: downStart})
		}
		d.setFastServers(next)
	}
	d.mu.Lock()
	if d.started {
		for _, s := range fresh {
			s.start(d.failures)
		}
	}
	d.servers, d.down = next, down
	d.mu.Unlock()
	for _, s := range fresh {
		s.log.Info("SIGHUP: server started", "feed", s.FeedPath(), "udp", s.UDPAddrs(), "protocols", s.Protocols())
	}
	for _, s := range gone {
		s.remove()
		s.log.Info("SIGHUP: server removed: stopped")
	}
}

// reload applies the server's new config nc (see Reload).
func (s *Server) reload(nc *config.Config, servers int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if why, err := fitShare(nc, max(servers, 1)); err == nil && why != "" {
		s.log.Warn("SIGHUP: " + why)
	}
	protos, err := s.buildProtocols(nc)
	if err != nil {
		s.log.Error("SIGHUP: config rejected; keeping the running one", "err", err)
		return
	}
	if err := s.store.SetBase(nc.ServerDoc); err != nil {
		closeProtocols(protos)
		s.log.Error("SIGHUP: [server] does not fit the fed state; keeping the running config", "err", err)
		return
	}
	if err := s.udp.SetLimits(s.pathLimits(nc)); err != nil {
		s.log.Error("SIGHUP: limits rejected", "err", err)
	} else if s.fast != nil {
		s.fast.SetLimits(s.name, s.pathLimits(nc))
	}
	s.udp.SetDeny(nc.Limits.DenyList())
	if s.fast != nil {
		s.fast.SetDeny(s.name, nc.Limits.DenyList())
	}
	s.swapProtocols(protos)
	if s.relay != nil {
		s.relay.SetPassLimits(passLimits(s.host.opts.Modules, nc))
	}
	for _, k := range nc.RestartKeys(s.cfg) {
		s.log.Warn("SIGHUP: change needs a restart to take effect", "key", k)
	}
	s.cfg = nc
	names := make([]string, len(protos))
	for i, p := range protos {
		names[i] = p.name
	}
	s.log.Info("SIGHUP: config reloaded", "protocols", names)
}

// ownRestartKeys are the keys of a server's change from old to nc that
// need it restarted and are its own, not the host's.
func ownRestartKeys(nc, old *config.Config) []string {
	var own []string
	for _, k := range nc.RestartKeys(old) {
		if !config.HostWide(k) {
			own = append(own, k)
		}
	}
	return own
}

// without is servers less those in drop, in order.
func without(servers []*Server, drop map[*Server]error) []*Server {
	var out []*Server
	for _, s := range servers {
		if _, ok := drop[s]; !ok {
			out = append(out, s)
		}
	}
	return out
}

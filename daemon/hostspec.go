package daemon

import (
	"errors"
	"path/filepath"

	"github.com/queryd/queryd/config"
)

// hostSpec is what a host runs: its host-wide tables, its servers in
// order and the server files it refused.
type hostSpec struct {
	main    *config.Config // [admin] [log] [xdp] are the host's
	servers []serverSpec
	failed  []downServer
	// multi: the host has (or may have) several servers.
	multi bool
}

// serverSpec is one server of a host: its name, file and tables.
type serverSpec struct {
	name, path string
	cfg        *config.Config
}

// specOf is the host opts describe: Options.Host, or Options.Config as
// the one server "main".
func specOf(opts Options) (*hostSpec, error) {
	if opts.Host != nil {
		return hostSpecOf(opts.Host), nil
	}
	if opts.Config == nil {
		return nil, errors.New("daemon: no config")
	}
	return singleSpec(opts.Config, opts.Path), nil
}

// singleSpec is cfg as a one-server host.
func singleSpec(cfg *config.Config, path string) *hostSpec {
	return &hostSpec{main: cfg, servers: []serverSpec{{name: config.MainServer, path: path, cfg: cfg}}}
}

// hostSpecOf is h as the daemon runs it. It is a host of several servers
// (logs and /healthz name them; one server's failure is its own) when the
// main file includes server files or h has more than one.
func hostSpecOf(h *config.Host) *hostSpec {
	spec := &hostSpec{main: h.Main, multi: len(h.Main.Servers.Include) > 0 || len(h.Servers)+len(h.Failed) > 1}
	for _, s := range h.Servers {
		spec.servers = append(spec.servers, serverSpec{name: s.Name, path: s.Path, cfg: s.Config})
	}
	taken := map[string]bool{}
	for _, s := range h.Servers {
		taken[s.Name] = true
	}
	for i := range h.Failed {
		f := &h.Failed[i]
		name := f.Name
		switch {
		case name == "": // a file whose name is no server name
			name = filepath.Base(f.Path)
		case taken[name]: // a second file of a server's name: named by its path
			name = f.Path
		}
		taken[name] = true
		spec.failed = append(spec.failed, downServer{name: name, path: f.Path, err: f, why: downRefused})
	}
	return spec
}

// loadSpec reads the host's files again (SIGHUP): the main file and every
// file it includes with Options.Host (config.ReloadHost: what runs keeps
// its name and what it holds), else the one config file.
func (d *Daemon) loadSpec() (*hostSpec, error) {
	mods := ConfigModules(d.opts.Modules)
	if d.opts.Host != nil {
		var running []config.HostServer
		for _, s := range d.running() {
			running = append(running, config.HostServer{Name: s.name, Path: s.path, Config: s.config()})
		}
		h, err := config.ReloadHost(d.opts.Path, running, mods...)
		if err != nil {
			return nil, err
		}
		spec := hostSpecOf(h)
		spec.multi = spec.multi || d.multi.Load()
		return spec, nil
	}
	cfg, err := config.Load(d.opts.Path, mods...)
	if err != nil {
		return nil, err
	}
	return singleSpec(cfg, d.opts.Path), nil
}

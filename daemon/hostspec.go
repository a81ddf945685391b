package daemon

import (
	"errors"

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

// mainServer is the name of the main file's server.
const mainServer = "main"

// specOf is the host opts describe: Options.Config as the one server
// "main".
func specOf(opts Options) (*hostSpec, error) {
	if opts.Config == nil {
		return nil, errors.New("daemon: no config")
	}
	return singleSpec(opts.Config, opts.Path), nil
}

// singleSpec is cfg as a one-server host.
func singleSpec(cfg *config.Config, path string) *hostSpec {
	return &hostSpec{main: cfg, servers: []serverSpec{{name: mainServer, path: path, cfg: cfg}}}
}

// loadSpec reads the host's files again (SIGHUP).
func (d *Daemon) loadSpec() (*hostSpec, error) {
	cfg, err := config.Load(d.opts.Path, modulesOf(d.opts.Modules)...)
	if err != nil {
		return nil, err
	}
	return singleSpec(cfg, d.opts.Path), nil
}

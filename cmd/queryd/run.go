package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/protocols"
)

// protocolModule is a protocol module as queryd uses it: the daemon's
// Module (config section, handler, services) and the query command's
// querier.
type protocolModule = protocols.Module

// modules are queryd's protocol modules, in demux order: the registration
// list (package protocols).
var modules = protocols.List()

// daemonModules returns the registration list as the daemon takes it.
func daemonModules() []daemon.Module {
	out := make([]daemon.Module, len(modules))
	for i, m := range modules {
		out[i] = m
	}
	return out
}

// configModules returns the config modules of the daemon: the
// registration list's sections and the sources the daemon runs itself
// ([agones]; daemon.ConfigModules).
func configModules() []config.Module { return daemon.ConfigModules(daemonModules()) }

// cmdRun runs the daemon until SIGTERM or SIGINT; SIGHUP reloads the
// config. It exits 1 when the daemon cannot start or a part of it fails
// for good, so that a supervisor restarts it.
func cmdRun(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("queryd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config file (default: the embedded demo config)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "queryd: unexpected argument %q\n%s", fs.Arg(0), usage())
		return 2
	}
	host, err := loadHost(*path)
	if err != nil {
		fmt.Fprintln(stderr, "queryd:", err)
		return 1
	}
	log := newLogger(host.Main.Log, stderr)
	whys, err := daemon.FitHostDescriptors(host)
	if err != nil {
		log.Warn("descriptor budget", "err", err)
	}
	for _, why := range whys {
		log.Warn(why)
	}
	for _, s := range host.Servers {
		for _, w := range s.Config.Warnings() {
			if len(host.Servers) > 1 {
				w = "server " + s.Name + ": " + w
			}
			log.Warn(w)
		}
	}
	// Handle signals before anything answers: a SIGHUP or SIGTERM sent as
	// soon as the sockets are up must reload or stop, not kill the process.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	d, err := daemon.New(daemon.Options{Host: host, Path: *path, Modules: daemonModules(), Log: log, Version: version, Commit: commit})
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	reload := make(chan struct{}, 1)
	go forwardSignals(sigs, reload, stop, log)
	if err := d.Run(ctx, reload); err != nil {
		return 1
	}
	return 0
}

// forwardSignals turns SIGHUP into a reload and SIGTERM or SIGINT into the
// end of the daemon's context.
func forwardSignals(sigs <-chan os.Signal, reload chan<- struct{}, stop func(), log *slog.Logger) {
	for sig := range sigs {
		if sig == syscall.SIGHUP {
			select {
			case reload <- struct{}{}:
			default: // a reload is already due
			}
			continue
		}
		log.Info("signal", "signal", sig.String())
		stop()
		return
	}
}

// loadHost reads the main config file and the server files it includes,
// or the embedded demo config (one server).
func loadHost(path string) (*config.Host, error) {
	if path == "" {
		return config.ParseHost(config.Default, ".", configModules()...)
	}
	return config.LoadHost(path, configModules()...)
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.Level}
	if c.Format == config.LogJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
	"github.com/queryd/queryd/wire"
)

// cmdRun runs the daemon until SIGTERM or SIGINT; SIGHUP reloads the config.
func cmdRun(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("queryd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config file (default: the embedded demo config)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "queryd: unexpected argument %q\n%s", fs.Arg(0), usage)
		return 2
	}
	cfg, err := loadConfig(*path)
	if err != nil {
		fmt.Fprintln(stderr, "queryd:", err)
		return 1
	}
	log := newLogger(cfg.Log, stderr)
	if why, err := fitDescriptors(cfg); err != nil {
		log.Warn("descriptor budget", "err", err)
	} else if why != "" {
		log.Warn(why)
	}
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	// Handle signals before anything answers: a SIGHUP or SIGTERM sent as
	// soon as the sockets are up must reload or stop, not kill the process.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	d, err := startDaemon(cfg, *path, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	notifyReady(log, d.protocolNames()) // systemd Type=notify (notify.go)
	status := d.wait(sigs)
	notifyStopping(log)
	d.stop()
	return status
}

// wait serves signals until SIGTERM or SIGINT (status 0) or until a part
// fails for good (status 1, so that a supervisor restarts queryd).
func (d *daemon) wait(sigs <-chan os.Signal) int {
	for {
		select {
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				notifyReloading(d.log)
				d.reload()
				notifyReady(d.log, d.protocolNames())
				continue
			}
			d.log.Info("shutting down", "signal", sig.String())
			return 0
		case err := <-d.failed:
			d.log.Error("shutting down: a part failed", "err", err)
			return 1
		}
	}
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Parse(config.Default)
	}
	return config.Load(path)
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var lvl slog.Level
	lvl.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// daemon is one running queryd: the store, the feed, the UDP responder, the
// admin listener and the protocol handlers wired together.
type daemon struct {
	path   string
	log    *slog.Logger
	reg    *prometheus.Registry
	store  *state.Store
	issuer *challenge.Issuer
	clock  *wire.Clock // set per receive batch; read by the issuer and handlers
	udp    *responder.Server
	feed   *feed.Server
	admin  *adminServer
	relay  *responder.Relay // relay mode ([relay] upstream); nil when off
	failed chan error       // a part that stopped for good (e.g. the feed's accept loop)

	mu       sync.Mutex // guards cfg, protos, unsub during reloads
	cfg      *config.Config
	protos   []protocol
	unsub    func()
	services []service
	stopOnce sync.Once
}

// service is a part that runs beside the responder (an HTTP listener,
// heartbeats): started after the sockets are open, closed on shutdown.
type service interface {
	Start() error
	Close() error
}

func startDaemon(cfg *config.Config, path string, log *slog.Logger) (*daemon, error) {
	d := &daemon{path: path, cfg: cfg, log: log, reg: prometheus.NewRegistry(), failed: make(chan error, 1)}
	d.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var err error
	if d.store, err = state.NewStore(cfg.ServerDoc, nil); err != nil {
		return nil, fmt.Errorf("[server]: %w", err)
	}
	d.clock = &wire.Clock{}
	if d.issuer, err = challenge.New(d.clock.Now); err != nil {
		return nil, err
	}
	if err := d.startFeed(); err != nil {
		return nil, err
	}
	if err := d.startUDP(); err != nil {
		d.feed.Close()
		return nil, err
	}
	if err := d.startServices(); err != nil {
		d.stop()
		return nil, err
	}
	if cfg.Admin.Listen != "" {
		if d.admin, err = startAdmin(cfg.Admin.Listen, d); err != nil {
			d.stop()
			return nil, err
		}
	}
	registerStateMetrics(d.reg, d)
	log.Info("queryd started", "version", version, "feed", d.feed.Path(), "protocols", d.protocolNames())
	return d, nil
}

func (d *daemon) startFeed() error {
	sock := d.cfg.FeedSocket()
	if d.cfg.Feed.Socket == "" {
		// The default folder may be in /tmp: make it, or refuse one that
		// another user could have made to take the socket over.
		if err := feed.PrivateDir(filepath.Dir(sock)); err != nil {
			return err
		}
	}
	mode, err := d.cfg.FeedMode()
	if err != nil {
		return fmt.Errorf("[feed] mode: %w", err)
	}
	fc := feed.Config{
		Socket:      sock,
		Mode:        mode,
		Group:       d.cfg.Feed.Group,
		StaleAfter:  time.Duration(d.cfg.Feed.StaleAfter),
		MaxConns:    d.cfg.Feed.MaxConns,
		MaxBuffered: int64(d.cfg.Feed.MaxBuffered),
		LineTimeout: time.Duration(d.cfg.Feed.LineTimeout),
		Peer:        d.peerFunc(),
		Logger:      d.log.With("part", "feed"),
	}
	f, err := feed.Listen(fc, d.store)
	if err != nil {
		return err
	}
	d.feed = f
	go func() {
		if err := f.Serve(); err != nil {
			d.fail(fmt.Errorf("feed stopped: %w", err))
		}
	}()
	return nil
}

// fail reports a part that stopped for good: the daemon exits non-zero.
func (d *daemon) fail(err error) {
	select {
	case d.failed <- err:
	default: // one is enough
	}
}

func (d *daemon) startUDP() error {
	protos, err := buildProtocols(d.cfg, d.deps())
	if err != nil {
		return err
	}
	fwd, err := d.startRelay()
	if err != nil {
		return err
	}
	rc := responder.Config{
		Listen:     d.cfg.Listen.UDP,
		Socket:     d.cfg.Listen.Socket,
		Workers:    d.cfg.Listen.Workers,
		RecvBuffer: int(d.cfg.Listen.RecvBuffer),
		DisableGSO: !d.cfg.Listen.GSO,
		Limits:     limitsOf(d.cfg),
		Silent:     d.feed.Stale,
		Clock:      d.clock,
		Forward:    fwd,
		Logger:     d.log.With("part", "udp"),
		Registry:   d.reg,
	}
	if d.udp, err = responder.New(rc); err != nil {
		return err
	}
	d.swapProtocols(protos)
	if err := d.udp.Listen(); err != nil {
		return err
	}
	d.udp.Start()
	return nil
}

// deps is what protocol builders may use besides the config.
func (d *daemon) deps() deps {
	return deps{issuer: d.issuer, clock: d.clock, log: d.log, gamePort: firstPort(d.cfg)}
}

func firstPort(c *config.Config) uint16 {
	if len(c.Listen.UDP) == 0 {
		return 0
	}
	ap, _ := netip.ParseAddrPort(c.Listen.UDP[0])
	return ap.Port()
}

func limitsOf(c *config.Config) responder.Limits {
	return responder.Limits{
		PerIPRate:     int(c.Limits.PerIPRate),
		PerIPBurst:    int(c.Limits.PerIPBurst),
		UnprovenRate:  int(c.Limits.UnprovenRate),
		UnprovenBurst: int(c.Limits.UnprovenBurst),
		TrackedIPs:    c.Limits.TrackedIPs,
	}
}

// swapProtocols makes protos the live handlers: they are subscribed to the
// store (and so encoded for the current snapshot) before the responder uses them.
func (d *daemon) swapProtocols(protos []protocol) {
	unsub := d.store.Subscribe(func(s *state.Snapshot) {
		for _, p := range protos {
			p.Update(s)
		}
	})
	hs := make([]responder.Handler, len(protos))
	for i, p := range protos {
		hs[i] = p
	}
	d.udp.SetHandlers(hs...)
	if d.unsub != nil {
		d.unsub()
	}
	closeProtocols(d.protos)
	d.protos, d.unsub = protos, unsub
}

// closeProtocols stops what the handlers run in the background (the SAGL
// logo loader) once they are no longer subscribed.
func closeProtocols(protos []protocol) {
	for _, p := range protos {
		if c, ok := p.(io.Closer); ok {
			c.Close()
		}
	}
}

func (d *daemon) protocolNames() []string {
	var names []string
	for _, p := range d.protos {
		names = append(names, p.Name())
	}
	return names
}

func (d *daemon) startServices() error {
	svcs, err := buildServices(d.cfg, d)
	if err != nil {
		return err
	}
	for _, s := range svcs {
		if err := s.Start(); err != nil {
			return err
		}
		d.services = append(d.services, s)
	}
	return nil
}

// reload re-reads the config file. A bad config is logged and the running
// one kept. Listen addresses, the feed socket and the admin listener need a
// restart to change.
func (d *daemon) reload() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.path == "" {
		d.log.Info("SIGHUP: running on the embedded config; nothing to reload")
		return
	}
	nc, err := config.Load(d.path)
	if err != nil {
		d.log.Error("SIGHUP: config rejected; keeping the running one", "err", err)
		return
	}
	if why, err := fitDescriptors(nc); err == nil && why != "" {
		d.log.Warn("SIGHUP: " + why)
	}
	protos, err := buildProtocols(nc, deps{issuer: d.issuer, clock: d.clock, log: d.log, gamePort: firstPort(nc)})
	if err != nil {
		d.log.Error("SIGHUP: config rejected; keeping the running one", "err", err)
		return
	}
	if err := d.store.SetBase(nc.ServerDoc); err != nil {
		d.log.Error("SIGHUP: [server] does not fit the fed state; keeping the running config", "err", err)
		return
	}
	if err := d.udp.SetLimits(limitsOf(nc)); err != nil {
		d.log.Error("SIGHUP: limits rejected", "err", err)
	}
	d.swapProtocols(protos)
	for _, w := range restartNeeded(d.cfg, nc) {
		d.log.Warn("SIGHUP: change needs a restart to take effect", "key", w)
	}
	d.cfg = nc
	d.log.Info("SIGHUP: config reloaded", "protocols", d.protocolNames())
}

func restartNeeded(old, nc *config.Config) []string {
	var keys []string
	if fmt.Sprint(old.Listen) != fmt.Sprint(nc.Listen) {
		keys = append(keys, "listen")
	}
	if old.Feed != nc.Feed {
		keys = append(keys, "feed")
	}
	if old.Admin != nc.Admin {
		keys = append(keys, "admin")
	}
	if old.SAGL.HTTP != nc.SAGL.HTTP {
		keys = append(keys, "sagl.http")
	}
	if old.SAGL.HTTPMaxConns != nc.SAGL.HTTPMaxConns {
		keys = append(keys, "sagl.http_max_conns")
	}
	if old.SAGL.HTTPIdleTimeout != nc.SAGL.HTTPIdleTimeout {
		keys = append(keys, "sagl.http_idle_timeout")
	}
	if fmt.Sprint(old.Quake3.Masters) != fmt.Sprint(nc.Quake3.Masters) {
		keys = append(keys, "quake3.masters")
	}
	if fmt.Sprint(old.Relay) != fmt.Sprint(nc.Relay) {
		keys = append(keys, "relay")
	}
	return keys
}

// stop shuts everything down, once: services, UDP sockets, the feed (its
// socket file is removed) and the admin listener.
func (d *daemon) stop() { d.stopOnce.Do(d.shutdown) }

func (d *daemon) shutdown() {
	for i := len(d.services) - 1; i >= 0; i-- {
		if err := d.services[i].Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			d.log.Warn("stopping", "err", err)
		}
	}
	if d.udp != nil {
		d.udp.Close()
	}
	d.mu.Lock()
	closeProtocols(d.protos)
	d.mu.Unlock()
	if d.feed != nil {
		d.feed.Close()
	}
	if d.admin != nil {
		d.admin.Close()
	}
	d.log.Info("stopped")
}

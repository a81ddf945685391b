package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon/status"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
	"github.com/queryd/queryd/xdp"
)

// Options are what a daemon is made from.
type Options struct {
	// Host is the host's main file and its servers (config.LoadHost), read
	// again (LoadHost of Path) on Reload; nil: Config is the one server
	// "main", read again with config.Load.
	Host    *config.Host
	Config  *config.Config // parsed with Modules' sections; unused with Host
	Path    string         // the (main) config file, read again on Reload; "": the embedded config (no reload)
	Modules []Module       // the protocol modules, in demux order
	Log     *slog.Logger
	Version string // for the start log line and queryd_build_info
	Commit  string // for queryd_build_info
}

// Daemon is one running queryd: a host of game servers (Server: each its
// own store, feed, responder, relay, poller, protocols and services) and
// what they share: the metrics registry, the challenge issuer and its
// clock, the admin endpoint and the status page's one sampling tick.
type Daemon struct {
	opts   Options
	log    *slog.Logger
	reg    *prometheus.Registry
	main   *config.Config // the host-wide tables: [admin] [log] [xdp]
	issuer *challenge.Issuer
	// clock is set per receive batch by every server's responder and read
	// by the issuer and the handlers: one clock for the host, as the
	// issuer is one (a batch's time is the time, whichever server's).
	clock *dgram.Clock
	build status.Build
	// heartbeats names the modules' master heartbeats' metrics (a
	// Heartbeater's), which every server's status page samples.
	heartbeats module.HeartbeatMetrics
	// budget is the host-wide per-IP budget every server's responder
	// draws on ([host]; daemon/hostbudget.go).
	budget *responder.HostBudget
	// fast is the XDP fast path, one program for every server (nil: off).
	fast *xdp.FastPath
	// multi: the host runs (or may run) several servers: logs and
	// /healthz name them, one server's failure is its own. Set at start,
	// and for good by a reload that finds [servers] or a second server.
	multi atomic.Bool

	admin *adminServer
	tick  *statusTick // nil when the admin listener is off
	sup   *supervisor // the host's parts: the status tick, the admin listener
	// pending are the host parts New made and Run starts.
	pending []part
	// failures receives a server one of whose parts failed for good.
	failures chan serverFailure

	// reloadMu serializes what changes the set of servers (a reload, a
	// server's failure).
	reloadMu sync.Mutex
	// holds are the addresses the servers hold: no two share one.
	holds   holds
	mu      sync.Mutex // guards servers and down
	servers []*Server  // running, in the host's order
	down    []downServer
	started bool // Run has started the servers: those a reload makes start at once
}

// downServer is a server of the host that does not run: its file was
// refused, it could not start, or a part of it failed for good.
type downServer struct {
	name, path string
	err        error
	// why is queryd_server_state's reason: downRefused, downStart or
	// downFailed.
	why string
}

// The reasons a server is down (queryd_server_state's "reason").
const (
	downRefused = "refused" // its file was refused (config errors, a name or address another server has)
	downStart   = "start"   // it could not start (a socket, a folder, the fast path)
	downFailed  = "failed"  // a part of it failed for good while it ran
)

// live is a module's running handler.
type live struct {
	name  string
	proto module.Protocol
}

// New makes a daemon and acquires everything its servers serve from (each
// one's feed socket, UDP sockets, relay, modules' services) and the admin
// listener, failing with the reason if any cannot be had — for a host of
// several servers, one that cannot start is logged, reported by /healthz
// and left out; New fails only when none can. Nothing answers until Run.
func New(opts Options) (_ *Daemon, err error) {
	spec, err := specOf(opts)
	if err != nil {
		return nil, err
	}
	d := &Daemon{opts: opts, main: spec.main, log: opts.Log, reg: prometheus.NewRegistry(), clock: &dgram.Clock{},
		heartbeats: heartbeatMetrics(opts.Modules)}
	d.multi.Store(spec.multi)
	if d.log == nil {
		d.log = slog.Default()
	}
	d.failures = make(chan serverFailure, 1)
	d.sup = newSupervisor(d.log)
	d.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	registerBuildInfo(d.reg, opts.Version, opts.Commit)
	d.reg.MustRegister(stateCollector{d})
	d.build = readStatusBuild(opts.Version, opts.Commit)
	if d.issuer, err = challenge.New(d.clock.Now); err != nil {
		return nil, err
	}
	if d.budget, err = newHostBudget(spec.main); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			for i := len(d.pending) - 1; i >= 0; i-- {
				closePart(d.pending[i])
			}
			for _, s := range d.servers {
				s.stop()
			}
		}
	}()
	if err := d.startServers(spec); err != nil {
		return nil, err
	}
	if p, err := d.newXDP(); err != nil {
		return nil, err
	} else if p != nil {
		d.pending = append(d.pending, p) // started after the servers, stopped before them
	}
	if d.tick = d.newStatusTick(); d.tick != nil {
		d.pending = append(d.pending, d.tick) // started before the admin listener, stopped after it
	}
	p, err := d.newAdmin()
	if err != nil {
		return nil, err
	}
	if p != nil {
		d.pending = append(d.pending, p)
	}
	return d, nil
}

// startServers makes spec's servers. The only server's start failure is
// the host's; with several, one that cannot start is logged and down, and
// it fails only when none could.
func (d *Daemon) startServers(spec *hostSpec) error {
	var first error
	for _, ss := range spec.servers {
		s, err := d.newServer(ss.name, ss.path, ss.cfg)
		if err != nil {
			if !d.multi.Load() {
				return err
			}
			err = fmt.Errorf("server %s: %w", ss.name, err)
			first = cmp.Or(first, err)
			d.log.Error("server cannot start", "server", ss.name, "file", ss.path, "err", err)
			d.down = append(d.down, downServer{name: ss.name, path: ss.path, err: err, why: downStart})
			continue
		}
		d.servers = append(d.servers, s)
	}
	for _, f := range spec.failed {
		d.log.Error("server file refused: server not started", "server", f.name, "file", f.path, "err", f.err)
		d.down = append(d.down, f)
	}
	if len(d.servers) == 0 && first != nil {
		return first
	}
	return nil
}

// Run serves until ctx is done (nil) or a part fails for good (its error,
// naming the part), then stops every part. A part of one server failing
// stops that server only while another runs (the log and /healthz say
// why); the last running server's failure stops the daemon. reload
// receives a value for each SIGHUP.
func (d *Daemon) Run(ctx context.Context, reload <-chan struct{}) error {
	d.mu.Lock()
	for _, s := range d.servers {
		s.start(d.failures)
	}
	d.started = true
	d.mu.Unlock()
	for _, p := range d.pending {
		d.sup.start(p)
	}
	d.pending = nil
	d.logStarted()
	notifyReady(d.log, d.Protocols())
	var err error
loop:
	for {
		select {
		case <-reload:
			notifyReloading(d.log)
			d.Reload()
			notifyReady(d.log, d.Protocols())
		case <-ctx.Done():
			d.log.Info("shutting down")
			break loop
		case f := <-d.failures:
			if d.serverFailed(f) {
				err = f.err
				d.log.Error("shutting down: a part failed", "err", err)
				break loop
			}
		case err = <-d.sup.failed():
			d.log.Error("shutting down: a part failed", "err", err)
			break loop
		}
	}
	notifyStopping(d.log)
	d.sup.stop()
	d.reloadMu.Lock()
	d.mu.Lock()
	servers := d.servers
	d.mu.Unlock()
	for i := len(servers) - 1; i >= 0; i-- {
		servers[i].stop()
	}
	d.reloadMu.Unlock()
	d.log.Info("stopped")
	return err
}

// logStarted logs the start: the one server's feed and protocols, or each
// server's.
func (d *Daemon) logStarted() {
	if !d.multi.Load() {
		if s := d.first(); s != nil {
			d.log.Info("queryd started", "version", d.opts.Version, "feed", s.FeedPath(), "protocols", s.Protocols())
		}
		return
	}
	d.log.Info("queryd started", "version", d.opts.Version, "servers", d.ServerNames(), "down", len(d.downServers()))
	for _, s := range d.running() {
		s.log.Info("server started", "feed", s.FeedPath(), "udp", s.UDPAddrs(), "protocols", s.Protocols())
	}
}

// serverFailed stops the failed server and reports whether the daemon
// must stop: it was the last server running (or the host's only one).
func (d *Daemon) serverFailed(f serverFailure) bool {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	d.mu.Lock()
	i := slices.Index(d.servers, f.s)
	if i < 0 { // a reload stopped it meanwhile
		d.mu.Unlock()
		return false
	}
	last := len(d.servers) == 1 || !d.multi.Load()
	if last {
		d.mu.Unlock()
		return true
	}
	d.servers = append(d.servers[:i:i], d.servers[i+1:]...)
	d.down = append(d.down, downServer{name: f.s.name, path: f.s.path, err: f.err, why: downFailed})
	rest := append([]*Server(nil), d.servers...)
	d.mu.Unlock()
	d.setFastServers(rest)
	f.s.log.Error("server stopped: a part failed (the other servers run on; SIGHUP starts it again)", "err", f.err)
	f.s.remove()
	return false
}

// running returns the running servers, in the host's order.
func (d *Daemon) running() []*Server {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*Server(nil), d.servers...)
}

// downServer returns server name if it is one of the host's that do not
// run.
func (d *Daemon) downServer(name string) (downServer, bool) {
	for _, ds := range d.downServers() {
		if ds.name == name {
			return ds, true
		}
	}
	return downServer{}, false
}

// downServers returns the servers that do not run, and why.
func (d *Daemon) downServers() []downServer {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]downServer(nil), d.down...)
}

// serverCount is how many servers the host has, running or down.
func (d *Daemon) serverCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.servers) + len(d.down)
}

// first returns the host's first running server (nil: none).
func (d *Daemon) first() *Server {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.servers) == 0 {
		return nil
	}
	return d.servers[0]
}

// ServerNames names the running servers, in the host's order ("main"
// first when the main file is a server).
func (d *Daemon) ServerNames() []string {
	var names []string
	for _, s := range d.running() {
		names = append(names, s.name)
	}
	return names
}

// Server returns the running server name (nil when absent).
func (d *Daemon) Server(name string) *Server {
	for _, s := range d.running() {
		if s.name == name {
			return s
		}
	}
	return nil
}

// Protocols names the first server's live protocol handlers, in demux
// order.
func (d *Daemon) Protocols() []string {
	if s := d.first(); s != nil {
		return s.Protocols()
	}
	return nil
}

// UDPAddrs returns the first server's bound UDP addresses (useful with
// port 0).
func (d *Daemon) UDPAddrs() []netip.AddrPort {
	if s := d.first(); s != nil {
		return s.UDPAddrs()
	}
	return nil
}

// AdminAddr returns the admin listener's address, or "" when it is off.
func (d *Daemon) AdminAddr() string {
	if d.admin == nil {
		return ""
	}
	return d.admin.ln.Addr().String()
}

// FeedPath returns the first server's feed socket path.
func (d *Daemon) FeedPath() string {
	if s := d.first(); s != nil {
		return s.FeedPath()
	}
	return ""
}

// Snapshot returns the first server's current state snapshot.
func (d *Daemon) Snapshot() *state.Snapshot {
	if s := d.first(); s != nil {
		return s.Snapshot()
	}
	return nil
}

// Registry returns the daemon's metrics registry (every server's series
// labelled server="NAME").
func (d *Daemon) Registry() *prometheus.Registry { return d.reg }

// adminOn reports whether the admin listener is configured.
func (d *Daemon) adminOn() bool { return d.main.Admin.Listen.IsValid() }

// errNoServer is the answer for a server name the host does not run.
var errNoServer = errors.New("no such server")

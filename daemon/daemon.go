package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon/status"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/relay"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
	"github.com/queryd/queryd/upstream"
	"github.com/queryd/queryd/xdp"
)

// Options are what a daemon is made from.
type Options struct {
	Config  *config.Config // parsed with Modules' sections
	Path    string         // the config file, read again on Reload; "": the embedded config (no reload)
	Modules []Module       // the protocol modules, in demux order
	Log     *slog.Logger
	Version string // for the start log line and queryd_build_info
	Commit  string // for queryd_build_info
}

// Daemon is one running queryd: the store, the feed, the UDP responder,
// relay mode, the upstream poller, the protocol handlers and services, and
// the admin endpoint.
type Daemon struct {
	opts   Options
	log    *slog.Logger
	reg    *prometheus.Registry
	store  *state.Store
	issuer *challenge.Issuer
	clock  *dgram.Clock // set per receive batch; read by the issuer and handlers
	udp    *responder.Server
	feed   *feed.Server
	relay  *relay.Relay // nil when relay mode is off
	// upstream polls the game server for the state; nil without [upstream].
	upstream *upstream.Poller
	// silence says whether queryd is silent; everything that answers reads it.
	silence *silence
	xdp     *xdp.FastPath // nil when [xdp] is off or the kernel refused it
	divert  *xdp.Divert   // nil without [listen] divert (daemon/divert.go)
	// feedHTTP is the loopback HTTP feed; nil without [feed] http.
	feedHTTP *feed.HTTPServer
	admin    *adminServer
	status   *status.Sampler // the status page's; nil when the admin listener is off
	sup      *supervisor
	// pending are the parts New made and Run starts.
	pending []part

	mu     sync.Mutex // guards cfg, protos, unsub during reloads
	cfg    *config.Config
	protos []live
	unsub  func()
}

// live is a module's running handler.
type live struct {
	name  string
	proto module.Protocol
}

// New makes a daemon and acquires everything it serves from (the feed
// socket, the UDP sockets, the relay, the modules' services, the admin
// listener), failing with the reason if any cannot be had. Nothing answers
// until Run.
func New(opts Options) (d *Daemon, err error) {
	d = &Daemon{opts: opts, cfg: opts.Config, log: opts.Log, reg: prometheus.NewRegistry(), clock: &dgram.Clock{}}
	if d.log == nil {
		d.log = slog.Default()
	}
	d.sup = newSupervisor(d.log)
	d.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	registerBuildInfo(d.reg, opts.Version, opts.Commit)
	if d.store, err = state.NewStore(d.cfg.ServerDoc, nil); err != nil {
		return nil, fmt.Errorf("[server]: %w", err)
	}
	if d.issuer, err = challenge.New(d.clock.Now); err != nil {
		return nil, err
	}
	var parts []part
	defer func() {
		if err != nil {
			for i := len(parts) - 1; i >= 0; i-- {
				closePart(parts[i])
			}
		}
	}()
	for _, start := range []func() (part, error){d.newFeed, d.newFeedHTTP, d.newRelay, d.newUpstream, d.newSilence, d.newUDP, d.newXDP, d.newDivert} {
		p, err := start()
		if err != nil {
			return nil, err
		}
		if p != nil {
			parts = append(parts, p)
		}
	}
	svcs, err := d.newServices()
	for _, s := range svcs {
		parts = append(parts, s)
	}
	if err != nil {
		return nil, err
	}
	if d.status = d.newStatus(); d.status != nil {
		parts = append(parts, d.status) // started before the admin listener, stopped after it
	}
	if p, err := d.newAdmin(); err != nil {
		return nil, err
	} else if p != nil {
		parts = append(parts, p)
	}
	registerStateMetrics(d.reg, d)
	d.pending = parts
	return d, nil
}

// closePart releases a part that never served.
func closePart(p part) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.Serve(ctx)
}

// Run serves until ctx is done (nil) or a part fails for good (its error,
// naming the part), then stops every part. reload receives a value for
// each SIGHUP.
func (d *Daemon) Run(ctx context.Context, reload <-chan struct{}) error {
	for _, p := range d.pending {
		d.sup.start(p)
	}
	d.pending = nil
	d.log.Info("queryd started", "version", d.opts.Version, "feed", d.feed.Path(), "protocols", d.Protocols())
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
		case err = <-d.sup.failed():
			d.log.Error("shutting down: a part failed", "err", err)
			break loop
		}
	}
	notifyStopping(d.log)
	d.sup.stop()
	d.mu.Lock()
	closeProtocols(d.protos)
	d.mu.Unlock()
	d.log.Info("stopped")
	return err
}

// Protocols names the live protocol handlers, in demux order.
func (d *Daemon) Protocols() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	names := make([]string, len(d.protos))
	for i, p := range d.protos {
		names[i] = p.name
	}
	return names
}

// UDPAddrs returns the bound UDP addresses (useful with port 0).
func (d *Daemon) UDPAddrs() []netip.AddrPort { return d.udp.Addrs() }

// AdminAddr returns the admin listener's address, or "" when it is off.
func (d *Daemon) AdminAddr() string {
	if d.admin == nil {
		return ""
	}
	return d.admin.ln.Addr().String()
}

// FeedPath returns the feed socket's path.
func (d *Daemon) FeedPath() string { return d.feed.Path() }

// Snapshot returns the current state snapshot.
func (d *Daemon) Snapshot() *state.Snapshot { return d.store.Snapshot() }

// Registry returns the daemon's metrics registry.
func (d *Daemon) Registry() *prometheus.Registry { return d.reg }

package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/agones"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon/status"
	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/activity"
	"github.com/queryd/queryd/relay"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sleep"
	"github.com/queryd/queryd/state"
	"github.com/queryd/queryd/upstream"
	"github.com/queryd/queryd/xdp"
)

// Server is one game server of the host: its own store, feed (socket and
// HTTP), relay, upstream poller or Agones watcher, sleep cycle, silence value, UDP responder, protocol
// handlers and services, budgets and metrics (every series labelled
// server="NAME"). It is started and stopped as a whole: its parts run
// under a supervisor of its own.
type Server struct {
	host *Daemon
	name string
	path string // its file ("" for the embedded config)
	log  *slog.Logger
	reg  *trackedRegisterer // the host registry, wrapped with server="NAME"

	store    *state.Store
	feed     *feed.Server
	feedHTTP *feed.HTTPServer // nil without [feed] http
	relay    *relay.Relay     // nil when relay mode is off
	upstream *upstream.Poller // nil without [upstream]
	agones   *agones.Watcher  // nil without [agones]
	rest     *activity.Rest   // nil without [sleep] (daemon/sleep.go)
	sleep    *sleep.Sleeper   // nil without [sleep]
	silence  *silence
	udp      *responder.Server
	// fast is the host's XDP fast path while it answers for this server
	// (set before the server starts).
	fast *xdp.FastPath
	// divert is the server's [listen] divert in the fast path (nil
	// without; daemon/divert.go).
	divert *xdp.Divert
	// resting is the Sleeper's last Asleep (under mu): a divert attached
	// while the server sleeps rests too (daemon/sleep.go).
	resting bool
	// page is the status page's sampler (nil when the admin listener is
	// off); the host samples every server in one tick.
	page *status.Sampler

	sup     *supervisor
	pending []part // the parts newServer made and start runs
	stopped chan struct{}
	once    sync.Once

	mu     sync.Mutex // guards cfg, protos, unsub during reloads
	cfg    *config.Config
	protos []live
	unsub  func()
}

// newServer makes server name from cfg and acquires everything it serves
// from (the feed socket, the UDP sockets, the relay, the modules'
// services), failing with the reason if any cannot be had; what it
// acquired is released then. Nothing answers until start.
func (d *Daemon) newServer(name, path string, cfg *config.Config) (_ *Server, err error) {
	s := &Server{host: d, name: name, path: path, cfg: cfg, stopped: make(chan struct{})}
	s.log = d.log
	if d.multi.Load() {
		s.log = d.log.With("server", name)
	}
	s.reg = newTrackedRegisterer(prometheus.WrapRegistererWith(prometheus.Labels{"server": name}, d.reg),
		status.Metrics(d.heartbeats))
	s.sup = newSupervisor(s.log)
	if err := d.holds.take(name, cfg); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.reg.unregisterAll()
			d.holds.release(name)
		}
	}()
	if s.store, err = state.NewStore(cfg.ServerDoc, nil); err != nil {
		return nil, fmt.Errorf("[server]: %w", err)
	}
	var parts []part
	defer func() {
		if err != nil {
			for i := len(parts) - 1; i >= 0; i-- {
				closePart(parts[i])
			}
			s.mu.Lock()
			closeProtocols(s.protos)
			s.mu.Unlock()
		}
	}()
	s.newRest()
	for _, start := range []func() (part, error){s.newFeed, s.newFeedHTTP, s.newRelay, s.newUpstream, s.newAgones, s.newSleep, s.newSilence, s.newUDP} {
		p, err := start()
		if err != nil {
			return nil, err
		}
		if p != nil {
			parts = append(parts, p)
		}
	}
	svcs, err := s.newServices()
	for _, sv := range svcs {
		parts = append(parts, sv)
	}
	if err != nil {
		return nil, err
	}
	if err := registerStateMetrics(s.reg, s); err != nil {
		return nil, err
	}
	s.page = s.newStatus()
	s.pending = parts
	return s, nil
}

// start runs the server's parts; failed receives the server once one of
// them fails for good (the error is s.sup's first failure).
func (s *Server) start(failed chan<- serverFailure) {
	for _, p := range s.pending {
		s.sup.start(p)
	}
	s.pending = nil
	go func() {
		select {
		case err := <-s.sup.failed():
			select {
			case failed <- serverFailure{s: s, err: err}:
			case <-s.stopped: // the daemon stopping meanwhile
			}
		case <-s.stopped:
		}
	}()
}

// serverFailure is a server one of whose parts failed for good.
type serverFailure struct {
	s   *Server
	err error
}

// remove stops the server and unregisters its series (its file removed,
// or a part failed: a server of the same name may start again).
func (s *Server) remove() {
	s.stop()
	s.reg.unregisterAll()
	s.host.holds.release(s.name)
}

// stop ends the server, once: its parts in reverse start order (the
// services' flatline heartbeats before the UDP socket closes), its
// handlers. Its series stay (the daemon's last scrape, tests reading the
// registry after the stop).
func (s *Server) stop() {
	s.once.Do(func() {
		s.closeDivert()               // before its sockets close: the queries reach the game server again
		for _, p := range s.pending { // made but never started
			closePart(p)
		}
		s.pending = nil
		s.sup.stop()
		close(s.stopped)
		s.mu.Lock()
		closeProtocols(s.protos)
		s.protos = nil
		if s.unsub != nil {
			s.unsub()
			s.unsub = nil
		}
		s.mu.Unlock()
	})
}

// closePart releases a part that never served.
func closePart(p part) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.Serve(ctx)
}

// Name is the server's name: "main" for the main file's, else its file
// name without ".toml".
func (s *Server) Name() string { return s.name }

// Protocols names the server's live protocol handlers, in demux order.
func (s *Server) Protocols() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, len(s.protos))
	for i, p := range s.protos {
		names[i] = p.name
	}
	return names
}

// UDPAddrs returns the server's bound UDP addresses (useful with port 0).
func (s *Server) UDPAddrs() []netip.AddrPort { return s.udp.Addrs() }

// FeedPath returns the server's feed socket path.
func (s *Server) FeedPath() string { return s.feed.Path() }

// FeedHTTPAddr returns the server's HTTP feed address, or "" when it is off.
func (s *Server) FeedHTTPAddr() string {
	if s.feedHTTP == nil {
		return ""
	}
	return s.feedHTTP.Addr().String()
}

// Snapshot returns the server's current state snapshot.
func (s *Server) Snapshot() *state.Snapshot { return s.store.Snapshot() }

// Silence returns whether the server is silent now, why and since when.
func (s *Server) Silence() Silence { return s.silence.at(time.Now()) }

// config returns the server's running config.
func (s *Server) config() *config.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

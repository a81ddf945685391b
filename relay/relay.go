package relay

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/queryd/queryd/dgram"
)

// Relay defaults (the idle timeout is etrelay's; the others are argued in
// doc.go, "Sessions").
const (
	DefaultIdle         = 2 * time.Minute
	DefaultMaxSessions  = 4096
	DefaultMaxPerIP     = 16
	DefaultOpenRate     = 2.0
	DefaultOpenBurst    = 16
	DefaultShare24      = 1.0 / 16 // of max_sessions, per IPv4 /24
	DefaultShare56      = 1.0 / 64 // per IPv6 /56
	DefaultShare48      = 1.0 / 16 // per IPv6 /48
	DefaultReserve      = 0.25     // of max_sessions, kept for proven sessions
	DefaultProveAfter   = 5 * time.Second
	DefaultLoadingGrace = 15 * time.Second
	maxDatagram         = 65535
)

// Config configures a Relay. A source is an IPv4 address or an IPv6 /64; a
// site an IPv4 /24, an IPv6 /56 or an IPv6 /48. Each field means what the
// [relay] key of the same name means (doc.go, "Config"); the zero values of
// MaxSessions, MaxPerIP, OpenBurst and IdleTimeout take the defaults, a zero
// share, reserve or rate turns that limit off.
type Config struct {
	GameServer  netip.AddrPort // the game server
	IdleTimeout time.Duration  // a session ends after this long without a datagram either way; 0: 2 min
	// MaxSessions is the number of sessions (sockets to the game server) at once. 0: 4096.
	MaxSessions int
	// MaxPerIP is the number of sessions one source may hold; at the
	// cap, its own idlest evictable session makes room (or the datagram is
	// dropped). 0: 16.
	MaxPerIP int
	// OpenRate is how many sessions a source may open per second after a
	// burst of OpenBurst; 0: no limit.
	OpenRate  float64
	OpenBurst int // 0: 16
	// Share24, Share56 and Share48 are the parts of MaxSessions one IPv4
	// /24, IPv6 /56 and IPv6 /48 may hold (at least MaxPerIP); 0: no cap.
	Share24, Share56, Share48 float64
	// Reserve is the part of MaxSessions only proven sessions may take
	// (0 to 0.9).
	Reserve float64
	// ProveAfter is how long a session's two-way game traffic must last
	// before it is proven (0: proven at once).
	ProveAfter time.Duration
	// LoadingGrace is how long a playing session may be quiet (a map load)
	// and still never be evicted for a newcomer.
	LoadingGrace time.Duration
	// Pass limits what the relay passes of the datagrams the game server
	// answers from one bucket for every source (passlimit.go); a limit
	// that is not On is left out. SetPassLimits replaces them.
	Pass     []dgram.PassLimit
	Logger   *slog.Logger
	Registry prometheus.Registerer // nil: a private registry
}

// Relay is relay mode's Forwarder: queryd owns the public game port, and the
// datagrams no protocol handler claims go to the game server through one
// ephemeral UDP socket per client (its session), so the game server can tell
// clients apart; the game server's answers go back to the client from the
// public socket the client wrote to. A session ends after IdleTimeout without
// a datagram either way.
//
// A session costs a socket, a parked goroutine and about 5 KiB of memory
// (3.4 KiB of Go heap and stack, TestRelaySessionCost): datagrams to the
// game server are written by Forward itself, without blocking (a full
// socket buffer drops, like a congested hop), and the goroutine reading the
// game server's answers holds a receive buffer only while it copies a
// datagram out (io_unix.go). Sessions are capped in total, per source, per
// site and in how fast a source may open them, with a share kept for
// proven sessions (admit.go, proof.go); a session's socket is bound to a
// loopback address of its client's own when the game server is on loopback
// (loopback.go); sources that would make a loop are refused (loop.go).
type Relay struct {
	cfg   Config
	log   *slog.Logger
	dbg   debugLog // per-datagram lines at debug level (debuglog.go)
	m     metrics
	start time.Time // the clock's zero: session times are monotonic nanoseconds since
	// dial opens a socket to the game server bound to local (any address when
	// invalid); a test may replace it.
	dial  func(local netip.Addr) (*net.UDPConn, error)
	lo    loopbacks // the local address each client's sessions use
	loops loopGuard // sources that would make a loop
	caps  siteCaps
	// freshHold is how long a fresh session is kept from newcomers of
	// other sites (the constant; tests may lower it).
	freshHold time.Duration
	mu        sync.RWMutex // guards the maps, the fresh list, the counts and closed; never held while a socket opens
	// every session, also those whose socket is being opened
	bySrc map[netip.AddrPort]*session
	// sessions with a socket, by its local address as the game server sees it
	byLocal map[netip.AddrPort]*session
	sources map[sourceKey]*source // sources with a session
	sites   map[siteKey]*site     // sites with a session (when their cap is on)
	fresh   freshList             // sessions the game server has sent no game datagram, oldest first
	proven  int                   // sessions proven
	closed  bool
	wg      sync.WaitGroup // the sessions' downstream goroutines and the loop guard's refresher
	counter atomic.Int64   // sessions open, for the gauge
	nProven atomic.Int64   // proven sessions, for the gauge
	// dialWarned is the relay clock of the last warning about a failed dial.
	dialWarned atomic.Int64
	pass       atomic.Pointer[passLimits] // Config.Pass, swapped whole by SetPassLimits
}

// New makes a relay to cfg.GameServer. It opens sockets only as clients come.
func New(cfg Config) (*Relay, error) {
	if !cfg.GameServer.IsValid() || cfg.GameServer.Port() == 0 || cfg.GameServer.Addr().IsUnspecified() {
		return nil, fmt.Errorf("relay: upstream %s: want IP:PORT", cfg.GameServer)
	}
	cfg.GameServer = netip.AddrPortFrom(cfg.GameServer.Addr().Unmap(), cfg.GameServer.Port())
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	cfg = withDefaults(cfg)
	r := &Relay{
		cfg:       cfg,
		log:       cfg.Logger,
		dbg:       newDebugLog(cfg.Logger),
		start:     time.Now(),
		caps:      newSiteCaps(cfg),
		freshHold: freshHold,
		bySrc:     map[netip.AddrPort]*session{},
		byLocal:   map[netip.AddrPort]*session{},
		sources:   map[sourceKey]*source{},
		sites:     map[siteKey]*site{},
	}
	up := net.UDPAddrFromAddrPort(cfg.GameServer)
	r.dial = func(local netip.Addr) (*net.UDPConn, error) {
		var laddr *net.UDPAddr
		if local.IsValid() {
			laddr = &net.UDPAddr{IP: local.AsSlice()}
		}
		return net.DialUDP("udp", laddr, up)
	}
	r.lo = newLoopbacks(cfg.GameServer.Addr(), r.log)
	r.SetPassLimits(cfg.Pass)
	if err := r.m.register(cfg.Registry, func() float64 { return float64(r.counter.Load()) },
		func() float64 { return float64(r.nProven.Load()) }); err != nil {
		return nil, fmt.Errorf("relay metrics: %w", err)
	}
	r.loops.start(cfg.GameServer, &r.wg)
	return r, nil
}

// checkConfig refuses values that no default stands for.
func checkConfig(cfg Config) error {
	for _, f := range []struct {
		name string
		v    float64
		max  float64
	}{{"open rate", cfg.OpenRate, math.MaxFloat64}, {"/24 share", cfg.Share24, 1}, {"/56 share", cfg.Share56, 1},
		{"/48 share", cfg.Share48, 1}, {"reserve", cfg.Reserve, 0.9}} {
		if f.v < 0 || f.v > f.max || math.IsNaN(f.v) {
			return fmt.Errorf("relay: %s %v: want 0 to %v", f.name, f.v, f.max)
		}
	}
	if cfg.ProveAfter < 0 || cfg.LoadingGrace < 0 {
		return errors.New("relay: prove_after and loading_grace must not be negative")
	}
	return nil
}

// withDefaults fills in the zero fields of cfg that stand for a default.
func withDefaults(cfg Config) Config {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdle
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.MaxPerIP <= 0 {
		cfg.MaxPerIP = DefaultMaxPerIP
	}
	if cfg.OpenBurst <= 0 {
		cfg.OpenBurst = DefaultOpenBurst
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	return cfg
}

// now is the relay's monotonic clock in nanoseconds.
func (r *Relay) now() int64 { return int64(time.Since(r.start)) }

// Forward sends req to the game server in src's session, opening one if src
// has none and the caps let it. It never blocks for long: the write does not
// wait for socket buffer space, and only a datagram that arrives while its
// session's socket is being opened waits for that (a few microseconds).
// It reports whether req went to the game server; one dropped is counted
// in queryd_relay_dropped_total with why.
func (r *Relay) Forward(req []byte, src netip.AddrPort, local netip.Addr, back dgram.Sender) bool {
	if len(req) > maxDatagram {
		r.m.drop(dropTooLarge)
		return false
	}
	ticket, ok := r.pass.Load().take(req, src.Addr(), r.now)
	if !ok {
		r.m.drop(dropPassLimit)
		return false
	}
	if !r.forward(req, src, local, back) {
		ticket.refund() // it never reached the game server
		return false
	}
	return true
}

// forward is Forward past the pass limits.
func (r *Relay) forward(req []byte, src netip.AddrPort, local netip.Addr, back dgram.Sender) bool {
	r.mu.RLock()
	s, closed := r.bySrc[src], r.closed
	r.mu.RUnlock()
	switch {
	case closed:
		return false
	case s == nil:
		return r.open(req, src, local, back)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return r.send(s, req)
}

// errNoSocket: the session's socket could not be opened, or the session
// ended while it was being opened.
var errNoSocket = errors.New("relay: session without a socket")

// send writes req to s's socket and counts the outcome; s.wmu is held. It
// reports whether the write succeeded.
func (r *Relay) send(s *session, req []byte) bool {
	var err error
	if s.conn == nil {
		err = errNoSocket
	} else {
		if r.dbg.on { // before the write, so that the log keeps the datagrams' order
			r.dbg.datagram(s.client, "upstream", req)
		}
		err = s.io.write(req)
	}
	switch {
	case err == nil:
		now := r.now()
		s.touchUp(now)
		r.proveUp(s, now)
		r.m.up.Inc()
		r.m.upBytes.Add(float64(len(req)))
		return true
	case err == errNoSocket:
		r.m.drop(dropDial)
	case wouldBlock(err):
		r.m.drop(dropQueueFull)
	default: // e.g. ECONNREFUSED after an ICMP error, or the session just ended
		r.m.drop(dropSend)
	}
	return false
}

// SetPassLimits replaces the limits on what the relay passes of the
// datagrams the game server answers from one bucket for every source
// (Config.Pass; on SIGHUP): their buckets start afresh.
func (r *Relay) SetPassLimits(list []dgram.PassLimit) { r.pass.Store(newPassLimits(list)) }

// Sessions returns how many sessions are open (or opening).
func (r *Relay) Sessions() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.bySrc)
}

// GameServer returns the game server's address.
func (r *Relay) GameServer() netip.AddrPort { return r.cfg.GameServer }

// Close ends every session and waits for their goroutines. Later datagrams
// are dropped.
func (r *Relay) Close() error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		r.loops.stop()
	}
	for _, s := range r.bySrc {
		r.end(s)
	}
	r.mu.Unlock()
	r.wg.Wait()
	return nil
}

// Relay is the responder's Forwarder (responder.Forwarder has this method
// set; the relay does not import the responder).
var _ interface {
	Forward(req []byte, src netip.AddrPort, local netip.Addr, back dgram.Sender) bool
} = (*Relay)(nil)

package relay

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/queryd/queryd/wire"
)

// Relay defaults (the idle timeout is etrelay's).
const (
	DefaultIdle        = 2 * time.Minute
	DefaultMaxSessions = 4096
	DefaultMaxPerIP    = 16
	DefaultOpenRate    = 2.0
	DefaultOpenBurst   = 16
	relayMaxDatagram   = 65535
)

// Config configures a Relay. A source is an IPv4 address or an IPv6 /64.
type Config struct {
	Upstream    netip.AddrPort // the game server
	IdleTimeout time.Duration  // a session ends after this long without a datagram either way; 0: 2 min
	// MaxSessions is the number of sessions (upstream sockets) at once;
	// when all are taken, the idlest of a sample is evicted (or the new
	// client dropped). 0: 4096.
	MaxSessions int
	// MaxPerIP is the number of sessions one source may hold; at the
	// cap, its own idlest session is evicted (or the datagram dropped). 0: 16.
	MaxPerIP int
	// OpenRate is how many sessions a source may open per second after a
	// burst of OpenBurst; 0: 2 a second; below 0: no limit.
	OpenRate  float64
	OpenBurst int // 0: 16
	Logger    *slog.Logger
	Registry  prometheus.Registerer // nil: a private registry
}

// Relay is relay mode's Forwarder: queryd owns the public game port, and the
// datagrams no protocol handler claims go to the game server through one
// ephemeral UDP socket per client (its session), so the game server can tell
// clients apart; the game server's answers go back to the client from the
// public socket the client wrote to. A session ends after IdleTimeout without
// a datagram either way.
//
// A session costs a socket, a parked goroutine and about 5 KiB of memory
// (3.4 KiB of Go heap and stack, TestRelaySessionCost): datagrams to the game server are written by Forward itself, without
// blocking (a full socket buffer drops, like a congested hop), and the
// goroutine reading the game server's answers holds a receive buffer only
// while it copies a datagram out (relay_io_unix.go). Sessions are capped in
// total, per source, and in how fast a source may open them (relay_admit.go).
type Relay struct {
	cfg     Config
	log     *slog.Logger
	dbg     debugLog // per-datagram lines at debug level (debuglog.go)
	m       relayMetrics
	start   time.Time                        // the clock's zero: session times are monotonic nanoseconds since
	dial    func() (*net.UDPConn, error)     // opens an upstream socket (a test may replace it)
	mu      sync.RWMutex                     // guards the maps and closed; never held while a socket opens
	bySrc   map[netip.AddrPort]*relaySession // every session, also those whose socket is being opened
	byPort  map[uint16]*relaySession         // sessions with a socket, by its local port
	sources map[relaySourceKey]*relaySource  // sources with a session
	closed  bool
	wg      sync.WaitGroup // the sessions' downstream goroutines
	counter atomic.Int64   // sessions open, for the gauge
	// dialWarned is the relay clock of the last warning about a failed dial.
	dialWarned atomic.Int64
}

// NewRelay makes a relay to cfg.Upstream. It opens sockets only as clients come.
func New(cfg Config) (*Relay, error) {
	if !cfg.Upstream.IsValid() || cfg.Upstream.Port() == 0 || cfg.Upstream.Addr().IsUnspecified() {
		return nil, fmt.Errorf("relay: upstream %s: want IP:PORT", cfg.Upstream)
	}
	cfg = relayDefaults(cfg)
	r := &Relay{
		cfg:     cfg,
		log:     cfg.Logger,
		dbg:     newDebugLog(cfg.Logger),
		start:   time.Now(),
		bySrc:   map[netip.AddrPort]*relaySession{},
		byPort:  map[uint16]*relaySession{},
		sources: map[relaySourceKey]*relaySource{},
	}
	up := net.UDPAddrFromAddrPort(cfg.Upstream)
	r.dial = func() (*net.UDPConn, error) { return net.DialUDP("udp", nil, up) }
	if err := r.m.register(cfg.Registry, func() float64 { return float64(r.counter.Load()) }); err != nil {
		return nil, fmt.Errorf("relay metrics: %w", err)
	}
	return r, nil
}

// relayDefaults fills in the zero fields of cfg.
func relayDefaults(cfg Config) Config {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdle
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.MaxPerIP <= 0 {
		cfg.MaxPerIP = DefaultMaxPerIP
	}
	if cfg.OpenRate == 0 {
		cfg.OpenRate = DefaultOpenRate
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
func (r *Relay) Forward(req []byte, src netip.AddrPort, local netip.Addr, back wire.Sender) {
	if len(req) > relayMaxDatagram {
		r.m.drop(dropTooLarge)
		return
	}
	r.mu.RLock()
	s, closed := r.bySrc[src], r.closed
	r.mu.RUnlock()
	switch {
	case closed:
	case s == nil:
		r.open(req, src, local, back)
	default:
		s.wmu.Lock()
		r.send(s, req)
		s.wmu.Unlock()
	}
}

// errNoSocket: the session's socket could not be opened, or the session
// ended while it was being opened.
var errNoSocket = errors.New("relay: session without a socket")

// send writes req to s's socket and counts the outcome; s.wmu is held.
func (r *Relay) send(s *relaySession, req []byte) {
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
		s.touch(r.now())
		r.m.up.Inc()
		r.m.upBytes.Add(float64(len(req)))
	case err == errNoSocket:
		r.m.drop(dropDial)
	case wouldBlock(err):
		r.m.drop(dropQueueFull)
	default: // e.g. ECONNREFUSED after an ICMP error, or the session just ended
		r.m.drop(dropSend)
	}
}

// Peer returns the client behind the session whose socket has local port
// port: the real address of a player the game server sees as queryd.
func (r *Relay) Peer(port int) (netip.AddrPort, error) {
	if port < 1 || port > 65535 {
		return netip.AddrPort{}, fmt.Errorf("port %d out of range", port)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	s := r.byPort[uint16(port)]
	if s == nil {
		return netip.AddrPort{}, fmt.Errorf("no relay session on port %d", port)
	}
	return s.client, nil
}

// Sessions returns how many sessions are open (or opening).
func (r *Relay) Sessions() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.bySrc)
}

// Upstream returns the game server's address.
func (r *Relay) Upstream() netip.AddrPort { return r.cfg.Upstream }

// Close ends every session and waits for their goroutines. Later datagrams
// are dropped.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
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
	Forward(req []byte, src netip.AddrPort, local netip.Addr, back wire.Sender)
} = (*Relay)(nil)

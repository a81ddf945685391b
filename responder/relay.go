package responder

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
)

// Relay defaults (etrelay's constants).
const (
	DefaultRelayIdle        = 2 * time.Minute
	DefaultRelayQueue       = 64
	DefaultRelayMaxSessions = 4096
	relayMaxDatagram        = 65535
)

// RelayConfig configures a Relay.
type RelayConfig struct {
	Upstream    netip.AddrPort // the game server
	IdleTimeout time.Duration  // a session ends after this long without a datagram either way; 0: 2 min
	Queue       int            // datagrams queued per session towards the game server; 0: 64
	MaxSessions int            // sessions at once; when full, the idlest of a sample is evicted (or the new client dropped); 0: 4096
	Logger      *slog.Logger
	Registry    prometheus.Registerer // nil: a private registry
}

// Relay is relay mode's Forwarder: queryd owns the public game port, and the
// datagrams no protocol handler claims go to the game server through one
// ephemeral UDP socket per client (its session), so the game server can tell
// clients apart; the game server's answers go back to the client from the
// public socket the client wrote to. A session ends after IdleTimeout without
// a datagram either way. A full session queue drops, like a congested hop.
type Relay struct {
	cfg     RelayConfig
	log     *slog.Logger
	m       relayMetrics
	mu      sync.Mutex
	bySrc   map[netip.AddrPort]*relaySession
	byPort  map[uint16]*relaySession
	closed  bool
	wg      sync.WaitGroup
	counter atomic.Int64 // sessions open, for the gauge
}

// relaySession is one client's upstream socket and queue.
type relaySession struct {
	client netip.AddrPort
	local  netip.Addr // where the client's datagrams arrive; replies leave from it
	back   Sender
	conn   *net.UDPConn
	port   uint16 // the socket's local port, as the game server sees it
	queue  chan []byte
	done   chan struct{}
	last   atomic.Int64 // unix nanoseconds of the last datagram either way
}

// NewRelay makes a relay to cfg.Upstream. It opens sockets only as clients come.
func NewRelay(cfg RelayConfig) (*Relay, error) {
	if !cfg.Upstream.IsValid() || cfg.Upstream.Port() == 0 {
		return nil, fmt.Errorf("relay: upstream %s: want IP:PORT", cfg.Upstream)
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultRelayIdle
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultRelayQueue
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultRelayMaxSessions
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	r := &Relay{
		cfg:    cfg,
		log:    cfg.Logger,
		bySrc:  map[netip.AddrPort]*relaySession{},
		byPort: map[uint16]*relaySession{},
	}
	if err := r.m.register(cfg.Registry, func() float64 { return float64(r.counter.Load()) }); err != nil {
		return nil, fmt.Errorf("relay metrics: %w", err)
	}
	return r, nil
}

// Forward queues req for the game server in src's session, opening one if
// src has none. It never blocks.
func (r *Relay) Forward(req []byte, src netip.AddrPort, local netip.Addr, back Sender) {
	if len(req) > relayMaxDatagram {
		r.m.drop(dropTooLarge)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	s := r.bySrc[src]
	if s == nil {
		var err error
		if s, err = r.open(src, local, back); err != nil {
			r.log.Debug("relay: no session", "client", src, "err", err)
			return
		}
	}
	select {
	case s.queue <- append([]byte(nil), req...):
		s.touch()
	default:
		r.m.drop(dropQueueFull)
	}
}

// open starts a session for client; r.mu is held.
func (r *Relay) open(client netip.AddrPort, local netip.Addr, back Sender) (*relaySession, error) {
	if len(r.bySrc) >= r.cfg.MaxSessions && !r.evictIdlest() {
		r.m.drop(dropSessionsFull)
		return nil, errors.New("too many sessions")
	}
	conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(r.cfg.Upstream))
	if err != nil {
		r.m.drop(dropDial)
		return nil, fmt.Errorf("dial %s: %w", r.cfg.Upstream, err)
	}
	s := &relaySession{
		client: client, local: local, back: back, conn: conn,
		port:  conn.LocalAddr().(*net.UDPAddr).AddrPort().Port(),
		queue: make(chan []byte, r.cfg.Queue),
		done:  make(chan struct{}),
	}
	s.touch()
	r.bySrc[client] = s
	r.byPort[s.port] = s
	r.counter.Add(1)
	r.m.opened.Inc()
	r.log.Debug("relay: session +", "client", client, "port", s.port, "active", len(r.bySrc))
	r.wg.Add(2)
	go r.upstream(s)
	go r.downstream(s)
	return s, nil
}

// evictSample is how many sessions evictIdlest compares.
const evictSample = 16

// evictMinIdle is how long a session must have been quiet to be evicted: a
// playing client sends many datagrams a second and is never taken.
const evictMinIdle = 500 * time.Millisecond

// evictIdlest ends the idlest of a random sample of sessions, if it has been
// quiet for evictMinIdle, to make room for a new client; r.mu is held. With
// it, spoofed one-datagram sources that fill every session are replaced by
// real clients instead of locking them out; only a flood that renews all
// sessions twice a second can still keep new clients out (then counted as
// sessions_full).
func (r *Relay) evictIdlest() bool {
	var idlest *relaySession
	n := 0
	for _, s := range r.bySrc { // map order is random: a random sample
		if idlest == nil || s.last.Load() < idlest.last.Load() {
			idlest = s
		}
		if n++; n == evictSample {
			break
		}
	}
	if idlest == nil || time.Since(time.Unix(0, idlest.last.Load())) < evictMinIdle {
		return false
	}
	r.end(idlest)
	r.m.evicted.Inc()
	r.log.Debug("relay: session evicted", "client", idlest.client, "port", idlest.port)
	return true
}

func (s *relaySession) touch() { s.last.Store(time.Now().UnixNano()) }

// upstream writes the session's queue to the game server.
func (r *Relay) upstream(s *relaySession) {
	defer r.wg.Done()
	for {
		select {
		case b := <-s.queue:
			if _, err := s.conn.Write(b); err != nil {
				r.m.drop(dropSend)
				continue
			}
			r.m.up.Inc()
			r.m.upBytes.Add(float64(len(b)))
		case <-s.done:
			return
		}
	}
}

// downstream sends the game server's datagrams to the client from the public
// socket, and ends the session when it has been idle for IdleTimeout.
func (r *Relay) downstream(s *relaySession) {
	defer r.wg.Done()
	buf := make([]byte, relayMaxDatagram)
	for {
		s.conn.SetReadDeadline(time.Unix(0, s.last.Load()).Add(r.cfg.IdleTimeout))
		n, err := s.conn.Read(buf)
		if err != nil {
			var ne net.Error
			switch {
			case errors.Is(err, net.ErrClosed):
				return
			case errors.As(err, &ne) && ne.Timeout():
				if r.expire(s) {
					return
				}
			}
			continue // e.g. ICMP port unreachable while the game server restarts
		}
		s.touch()
		if err := s.back.SendFrom(buf[:n], s.local, s.client); err != nil {
			r.m.drop(dropSend)
			continue
		}
		r.m.down.Inc()
		r.m.downBytes.Add(float64(n))
	}
}

// expire ends s if it has been idle for IdleTimeout, and reports whether it did.
func (r *Relay) expire(s *relaySession) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(time.Unix(0, s.last.Load())) < r.cfg.IdleTimeout {
		return false
	}
	r.end(s)
	r.log.Debug("relay: session -", "client", s.client, "port", s.port, "active", len(r.bySrc))
	return true
}

// end removes and closes s; r.mu is held.
func (r *Relay) end(s *relaySession) {
	if r.bySrc[s.client] == s {
		delete(r.bySrc, s.client)
		delete(r.byPort, s.port)
		r.counter.Add(-1)
		close(s.done)
		s.conn.Close()
	}
}

// Peer returns the client behind the session whose socket has local port
// port: the real address of a player the game server sees as queryd.
func (r *Relay) Peer(port int) (netip.AddrPort, error) {
	if port < 1 || port > 65535 {
		return netip.AddrPort{}, fmt.Errorf("port %d out of range", port)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.byPort[uint16(port)]
	if s == nil {
		return netip.AddrPort{}, fmt.Errorf("no relay session on port %d", port)
	}
	return s.client, nil
}

// Sessions returns how many sessions are open.
func (r *Relay) Sessions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
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

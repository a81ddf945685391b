package relay

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queryd/queryd/dgram"
)

// session is one client's socket to the game server.
type session struct {
	client netip.AddrPort
	key    sourceKey
	sites  [2]siteRef // the site caps it counts against (IPv4: one)
	local  netip.Addr // where the client's datagrams arrive; replies leave from it
	back   dgram.Sender
	born   int64        // relay clock when it opened
	last   atomic.Int64 // relay clock of the last datagram either way
	lastUp atomic.Int64 // … from the client
	// gameAt is the relay clock of the first game datagram (not
	// connectionless) from the game server; 0 while there is none.
	gameAt atomic.Int64
	// lastGame is the relay clock of the latest such datagram.
	lastGame atomic.Int64
	state    atomic.Int32 // fresh, live or proven (changed under r.mu)
	ended    bool         // r.mu
	// prev and next link it in r.fresh while it is fresh (r.mu).
	prev, next *session

	// wmu serialises writes to the socket. The session's opener holds it
	// from before the session is visible until its socket is published, so
	// a second datagram from the same client waits for the socket (and goes
	// after the first) instead of opening another.
	wmu sync.Mutex
	// conn and addr are set once, with r.mu and wmu held, when the socket
	// is published; nil and invalid while it is being opened (or if it failed).
	conn *net.UDPConn
	addr netip.AddrPort // the socket's local address, as the game server sees it
	io   sockIO
}

func (s *session) touchUp(now int64) {
	s.last.Store(now)
	s.lastUp.Store(now)
}

// open opens a session for src and sends req in it, or drops req (counted)
// when the caps say no or no socket can be opened; it reports whether req
// went to the game server. The session is reserved under r.mu, its socket
// opened outside the lock, then published.
func (r *Relay) open(req []byte, src netip.AddrPort, local netip.Addr, back dgram.Sender) bool {
	if r.loops.refuse(src) {
		r.m.drop(dropLoop)
		return false
	}
	now := r.now()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return false
	}
	if s := r.bySrc[src]; s != nil { // another receive loop was first
		r.mu.Unlock()
		s.wmu.Lock()
		defer s.wmu.Unlock()
		return r.send(s, req)
	}
	if r.byLocal[src] != nil { // one of the relay's own sockets: a loop through queryd itself
		r.mu.Unlock()
		r.m.drop(dropLoop)
		return false
	}
	e, reason := r.admit(src, now)
	if e == nil {
		r.mu.Unlock()
		r.m.drop(reason)
		return false
	}
	s := &session{client: src, key: sourceOf(src.Addr()), local: local, back: back, born: now}
	s.last.Store(now)
	s.wmu.Lock() // uncontended: nobody else has seen s yet
	e.sessions = append(e.sessions, s)
	r.addToSites(s)
	r.fresh.push(s)
	r.bySrc[src] = s
	r.counter.Add(1)
	r.mu.Unlock()

	defer s.wmu.Unlock()
	conn, err := r.dial(r.lo.addrFor(src.Addr()))
	switch {
	case err != nil: // EMFILE and the like: give the slot back, count, go on
		r.mu.Lock()
		r.end(s)
		r.mu.Unlock()
		r.m.drop(dropDial)
		r.dialFailed(src, err)
		return false
	case !r.publish(s, conn): // the session ended (or the relay closed) meanwhile
		conn.Close()
		r.m.drop(dropSend)
		return false
	}
	return r.send(s, req)
}

// dialWarnEvery is how often a failing dial is logged as a warning (each
// failure is counted in queryd_relay_dropped_total{reason="dial"}).
const dialWarnEvery = time.Minute

// dialFailed logs a failed dial: at debug level, and as a warning at most
// once per dialWarnEvery (EMFILE under a flood must not flood the log too).
func (r *Relay) dialFailed(client netip.AddrPort, err error) {
	now := r.now()
	if last := r.dialWarned.Load(); last == 0 || now-last >= int64(dialWarnEvery) {
		if r.dialWarned.CompareAndSwap(last, now) {
			r.log.Warn("relay: cannot open a socket to the game server; datagrams of new clients are dropped (counted as dial)",
				"client", client, "err", err)
			return
		}
	}
	if r.dbg.on {
		r.dbg.line("relay: no socket to the game server", "client", client, "err", err)
	}
}

// publish makes conn s's socket and starts its downstream goroutine, unless
// s has ended meanwhile; s.wmu is held.
func (r *Relay) publish(s *session, conn *net.UDPConn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.ended || r.closed {
		return false
	}
	if err := s.io.init(conn); err != nil {
		r.end(s)
		return false
	}
	ua := conn.LocalAddr().(*net.UDPAddr).AddrPort()
	s.conn = conn
	s.addr = netip.AddrPortFrom(ua.Addr().Unmap(), ua.Port())
	r.byLocal[s.addr] = s
	r.m.opened.Inc()
	if r.dbg.on {
		r.dbg.line("relay: session +", "client", s.client, "local", s.addr, "active", len(r.bySrc))
	}
	r.wg.Add(1)
	go r.downstream(s)
	return true
}

// downstream sends the game server's datagrams to the client from the public
// socket, and ends the session when it has been idle for IdleTimeout.
func (r *Relay) downstream(s *session) {
	defer r.wg.Done()
	for {
		s.conn.SetReadDeadline(r.start.Add(time.Duration(s.last.Load()) + r.cfg.IdleTimeout))
		buf, n, err := s.io.read()
		if err != nil {
			switch {
			case errors.Is(err, net.ErrClosed):
				return
			case errors.Is(err, os.ErrDeadlineExceeded):
				if r.expire(s) {
					return
				}
			}
			continue // e.g. ICMP port unreachable while the game server restarts
		}
		now := r.now()
		s.last.Store(now)
		if !connectionless(buf[:n]) {
			r.proveDown(s, now)
		}
		if r.dbg.on { // before the send, so that the log keeps the datagrams' order
			r.dbg.datagram(s.client, "downstream", buf[:n])
		}
		err = s.back.SendFrom(buf[:n], s.local, s.client)
		putBuf(buf)
		if err != nil {
			r.m.drop(dropSend)
			continue
		}
		r.m.down.Inc()
		r.m.downBytes.Add(float64(n))
	}
}

// expire ends s if it has been idle for IdleTimeout, and reports whether s
// has ended.
func (r *Relay) expire(s *session) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.ended {
		return true
	}
	if r.now()-s.last.Load() < int64(r.cfg.IdleTimeout) {
		return false
	}
	r.end(s)
	if r.dbg.on {
		r.dbg.line("relay: session -", "client", s.client, "local", s.addr, "active", len(r.bySrc))
	}
	return true
}

// end removes s and closes its socket (if it has one yet: else its opener
// closes it); r.mu is held.
func (r *Relay) end(s *session) {
	if s.ended {
		return
	}
	s.ended = true
	delete(r.bySrc, s.client)
	if s.conn != nil {
		delete(r.byLocal, s.addr)
		s.conn.Close()
	}
	if e := r.sources[s.key]; e != nil {
		e.remove(s)
		if len(e.sessions) == 0 {
			delete(r.sources, s.key)
		}
	}
	r.removeFromSites(s)
	switch s.state.Load() {
	case stateFresh:
		r.fresh.remove(s)
	case stateProven:
		r.proven--
		r.nProven.Add(-1)
	}
	r.counter.Add(-1)
}

// The buffers the downstream goroutines read into, each only while it
// copies one datagram out: parked sessions hold none.
type datagramBuf = [maxDatagram]byte

var bufs = sync.Pool{New: func() any { return new(datagramBuf) }}

func getBuf() *datagramBuf  { return bufs.Get().(*datagramBuf) }
func putBuf(b *datagramBuf) { bufs.Put(b) }

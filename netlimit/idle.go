package netlimit

import (
	"container/list"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// Shedder keeps an HTTP server's connections under its Listener's cap by
// closing idle ones under pressure. Install its ConnState as the
// http.Server's. While more than Threshold connections are open, every new
// connection closes the connections idle longest — those waiting for their
// first request or, between requests, for the next — until Threshold are
// open again: the idle timeout shrinks from the server's IdleTimeout to the
// time it takes that many new connections to arrive. A connection reading
// a request or writing a response is never closed; the server's read and
// write timeouts bound those. So the cap is reached only when the
// connections over Threshold are all busy, and a new client gets in at
// the expense of an idle one instead of being refused.
//
// With Unproven set, a connection is also sheddable while busy until the
// server proves it (Prove: it sent a whole request, or one with a valid
// token): past Threshold, after the idle ones, the oldest unproven
// connections are closed, so that connections trickling their headers, or
// bodies the server will never want, cannot hold the cap either.
//
// Connections the server is waiting on for a request head go first; one
// it has not started reading yet (its goroutine not run yet on a busy
// machine) goes only when those are not enough, and one whose request
// head has been read (it is being answered: proven, or refused and closed
// at once) never does. Nor does one whose peer's bytes wait unread in its
// receive queue (Linux: SIOCINQ): on a busy machine the server's
// goroutine may not have read yet a whole request sent with the token,
// while a stream of new connections made it the oldest; it stays until
// the server has read what it sent.
// Connections must come from the Listener for this; others are shed as
// soon as they are idle or unproven.
type Shedder struct {
	// Listener is the listener the server serves; its Open count is what
	// Threshold is compared with.
	Listener *Listener
	// Threshold is how many open connections start the shedding; 0: ¾ of
	// Listener.Max (no shedding when Max is 0 too).
	Threshold int
	// Unproven makes busy connections the server has not proven sheddable
	// too (Prove).
	Unproven bool

	mu       sync.Mutex
	idle     list.List                  // net.Conn, idle longest first
	conns    map[net.Conn]*list.Element // tracked connections; nil element: busy
	unproven list.List                  // with Unproven: net.Conn not proven yet, oldest first
	fresh    map[net.Conn]*list.Element // their elements in unproven
	shed     atomic.Uint64
}

// Prove marks c as the server's to keep while busy: it is shed only while
// idle from now on (with Unproven).
func (s *Shedder) Prove(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.fresh[c]; e != nil {
		s.unproven.Remove(e)
		delete(s.fresh, c)
	}
}

// ConnState tracks c's state and, for a new connection, sheds idle ones
// when over Threshold. It is an http.Server.ConnState hook.
func (s *Shedder) ConnState(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		s.setIdle(c, true)
		s.track(c)
		s.shedOver(c)
	case http.StateIdle:
		if lc, ok := c.(*conn); ok {
			lc.head.next()
		}
		s.setIdle(c, true)
	case http.StateActive:
		s.setIdle(c, false)
	case http.StateClosed, http.StateHijacked:
		s.forget(c)
	}
}

// Shed returns how many idle connections were closed under pressure.
func (s *Shedder) Shed() uint64 { return s.shed.Load() }

// Tracked returns how many connections the Shedder knows of, and how many
// of them are idle.
func (s *Shedder) Tracked() (all, idle int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns), s.idle.Len()
}

func (s *Shedder) threshold() int {
	if s.Threshold > 0 {
		return s.Threshold
	}
	return s.Listener.Max * 3 / 4
}

// setIdle moves c to the back of the idle list (idle) or off it (busy).
func (s *Shedder) setIdle(c net.Conn, idle bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		s.conns = map[net.Conn]*list.Element{}
	}
	if e := s.conns[c]; e != nil {
		s.idle.Remove(e)
	}
	var e *list.Element
	if idle {
		e = s.idle.PushBack(c)
	}
	s.conns[c] = e
}

// track records a new connection as unproven (with Unproven).
func (s *Shedder) track(c net.Conn) {
	if !s.Unproven {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fresh == nil {
		s.fresh = map[net.Conn]*list.Element{}
	}
	s.fresh[c] = s.unproven.PushBack(c)
}

func (s *Shedder) forget(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(c)
}

// forgetLocked drops c from every list; s.mu is held.
func (s *Shedder) forgetLocked(c net.Conn) {
	if e := s.conns[c]; e != nil {
		s.idle.Remove(e)
	}
	delete(s.conns, c)
	if e := s.fresh[c]; e != nil {
		s.unproven.Remove(e)
		delete(s.fresh, c)
	}
}

// shedOver closes the connections idle longest (never keep, the new one)
// until the open count is back at the threshold.
func (s *Shedder) shedOver(keep net.Conn) {
	limit := s.threshold()
	if limit <= 0 {
		return
	}
	over := s.Listener.Open() - limit
	if over <= 0 {
		return
	}
	victims := make([]net.Conn, 0, over)
	s.mu.Lock()
	// Those the server waits on first (idle, then unproven busy ones), then,
	// if that is not enough, those it has not read yet (so that a burst of
	// new connections cannot fill the cap); never one whose head is in.
	for _, pick := range []func(net.Conn) bool{waitedOn, unread} {
		for _, l := range []*list.List{&s.idle, &s.unproven} {
			for e := l.Front(); e != nil && len(victims) < over; {
				next := e.Next()
				if c := e.Value.(net.Conn); c != keep && pick(c) {
					s.forgetLocked(c)
					victims = append(victims, c)
				}
				e = next
			}
		}
	}
	s.mu.Unlock()
	for _, c := range victims {
		c.Close()
		s.shed.Add(1)
	}
}

// waitedOn reports whether the server is waiting on c for a request head
// and none of it waits in the receive queue (always true of a connection
// that is not the Listener's).
func waitedOn(c net.Conn) bool {
	lc, ok := c.(*conn)
	return !ok || lc.head.waiting() && !pending(lc.Conn)
}

// unread reports whether the server has not started reading c yet and
// the peer has sent nothing it could read.
func unread(c net.Conn) bool {
	lc, ok := c.(*conn)
	return ok && lc.head.unread() && !pending(lc.Conn)
}

// Waiting marks c, whose request waits for something other than the peer
// (a rate limit's next token), idle until done is called: while it waits,
// a new connection may close it as it would close a connection between
// requests. Call done before writing the response.
func (s *Shedder) Waiting(c net.Conn) (done func()) {
	if lc, ok := c.(*conn); ok {
		lc.head.next() // as between requests: sheddable
	}
	s.setIdle(c, true)
	return func() { s.setIdle(c, false) }
}

package relay

// A session's states (session.state). A session opens fresh; it is live
// once the game server has sent it a game datagram (one that is not
// connectionless: the game server sends those only to a client that
// completed its handshake, which a blind spoofer cannot) and the client
// has spoken after it; it is proven once that two-way game traffic has
// lasted ProveAfter, or when the game server asked the feed's peer about it.
const (
	stateFresh int32 = iota
	stateLive
	stateProven
)

// connectionless reports whether p is a connectionless datagram of the
// Quake and Source engines (FF FF FF FF first): challenges, queries,
// connect requests. Every other datagram counts as game traffic.
func connectionless(p []byte) bool {
	return len(p) >= 4 && p[0] == 0xFF && p[1] == 0xFF && p[2] == 0xFF && p[3] == 0xFF
}

// proveDown notes a game datagram from the game server to s at now (its
// downstream goroutine).
func (r *Relay) proveDown(s *session, now int64) {
	s.lastGame.Store(now)
	g := s.gameAt.Load()
	if g == 0 {
		s.gameAt.Store(now)
		return
	}
	if s.state.Load() == stateLive && r.twoWay(s, g, now) {
		r.promote(s, stateProven)
	}
}

// proveUp notes a datagram from s's client at now (s.wmu is held); on a
// session already proven it costs one atomic load.
func (r *Relay) proveUp(s *session, now int64) {
	st := s.state.Load()
	if st == stateProven {
		return
	}
	g := s.gameAt.Load()
	if g == 0 {
		return
	}
	if st == stateFresh {
		r.promote(s, stateLive)
	}
	if r.twoWay(s, g, now) {
		r.promote(s, stateProven)
	}
}

// twoWay reports whether both sides of s have sent since ProveAfter past
// the first game datagram g.
func (r *Relay) twoWay(s *session, g, now int64) bool {
	p := int64(r.cfg.ProveAfter)
	return now-g >= p && s.lastGame.Load()-g >= p && s.lastUp.Load()-g >= p
}

// promote raises s to state to (never lowers it); it takes r.mu.
func (r *Relay) promote(s *session, to int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.promoteLocked(s, to)
}

// promoteLocked is promote with r.mu held.
func (r *Relay) promoteLocked(s *session, to int32) {
	from := s.state.Load()
	if s.ended || from >= to {
		return
	}
	if from == stateFresh {
		r.fresh.remove(s)
	}
	if to == stateProven {
		r.proven++
		r.nProven.Add(1)
	}
	s.state.Store(to)
}

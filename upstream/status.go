package upstream

import (
	"sync"
	"time"
)

// Status is what the poller knows of the game server it fronts, for the
// status page's upstream card and /status.json.
type Status struct {
	// Protocol is the protocol the game server is asked in ("a2s").
	Protocol string
	// Address is the game server's address, "IP:PORT".
	Address string
	// LastAnswer is when the game server last answered well (zero: never
	// since queryd started).
	LastAnswer time.Time
	// RTT is the round trip of the last good answer: from the poll's first
	// request to its last reply (0 before the first).
	RTT time.Duration
	// LastError is why the last poll failed (no answer, an answer that could
	// not be read, or one the state refused); "" when the last poll was
	// answered, whole or in part.
	LastError string
	// Partial says what part of the last good answer did not come (its last
	// answer stands in, e.g. "A2S_RULES: timeout"); "" when it was whole.
	Partial string
}

// status is the part of Status the poll loop writes (the rest is config
// and lastGood).
type status struct {
	mu        sync.Mutex
	rtt       time.Duration
	lastError string
	partial   string
}

// failed records a poll that gave no good answer.
func (s *status) failed(err error) {
	s.mu.Lock()
	s.lastError = err.Error()
	s.mu.Unlock()
}

// answered records a good answer and what part of it did not come (nil: none).
func (s *status) answered(rtt time.Duration, partial error) {
	s.mu.Lock()
	s.rtt, s.lastError, s.partial = rtt, "", ""
	if partial != nil {
		s.partial = partial.Error()
	}
	s.mu.Unlock()
}

// Status returns what the poller knows of the game server now. It is safe
// to call from any goroutine.
func (p *Poller) Status() Status {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	return Status{
		Protocol:   p.cfg.Protocol,
		Address:    p.cfg.Address,
		LastAnswer: p.LastAnswer(),
		RTT:        p.st.rtt,
		LastError:  p.st.lastError,
		Partial:    p.st.partial,
	}
}

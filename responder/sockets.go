package responder

import (
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// SocketConfig configures queryd's socket layer on its own (Sockets); a
// Server takes the same fields from its Config.
type SocketConfig struct {
	Listen     []netip.AddrPort // UDP addresses: 0.0.0.0:27015, [::]:27015
	Socket     SocketLayer      // SocketAuto: SocketBatch on Linux, else SocketPortable
	Workers    int              // sockets (batch, uring) or goroutines (portable) per address; 0 means GOMAXPROCS
	RecvBuffer int              // SO_RCVBUF in bytes; 0 keeps the system default
	DisableGSO bool             // see Config.DisableGSO
	MaxRequest int              // largest datagram read whole; 0 means 2,048
	// Steer, when set (batch and uring layers), gives each address Workers
	// more sockets in its reuseport group for proven sources: Steer is
	// called with them and the ordinary ones once they are bound, and
	// attaches what puts proven sources on them (package steer). The
	// receive loops read them first. If it fails, the extra sockets are
	// closed and the address runs unsteered, said in the log.
	Steer  SteerFunc
	Logger *slog.Logger
}

// SteerFunc steers the proven sources of one reuseport group to the
// sockets proven, the rest to ordinary (file descriptors, bound). The
// Closer it returns is closed with the address's sockets.
type SteerFunc func(proven, ordinary []int) (io.Closer, error)

// withDefaults fills in the defaults and checks the choice of socket layer.
func (c SocketConfig) withDefaults() (SocketConfig, error) {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Socket == SocketAuto {
		c.Socket = defaultSocket
	}
	if c.Socket != SocketBatch && c.Socket != SocketPortable && c.Socket != SocketUring {
		return c, fmt.Errorf("socket layer %q: want %q, %q or %q", c.Socket, SocketBatch, SocketUring, SocketPortable)
	}
	if c.Socket != SocketPortable && !batchSupported {
		return c, fmt.Errorf("socket layer %q is Linux-only; use %q", SocketBatch, SocketPortable)
	}
	if c.MaxRequest <= 0 {
		c.MaxRequest = 2048
	}
	return c, nil
}

// pipeline is what the receive loops hand their datagrams to: a Server's
// (route, budgets, metrics) or a bare Handler (Sockets).
type pipeline interface {
	// newSession makes one receive loop's state.
	newSession() *session
	// beginBatch readies ss for a batch of datagrams received at now
	// (one reading of the clock serves every socket of a round).
	beginBatch(ss *session, now time.Time)
	// process answers one datagram of the batch and returns the datagrams
	// to send (pointing into scratch or into a handler's replies).
	process(ss *session, req, scratch []byte, src netip.AddrPort, oob []byte, back Sender) [][]byte
}

var (
	_ pipeline = (*Server)(nil)
	_ pipeline = (*Sockets)(nil)
)

// socketSet is the sockets of the configured addresses and their receive
// loops.
type socketSet struct {
	cfg       SocketConfig
	listeners []listener
	wg        sync.WaitGroup
	closed    atomic.Bool
}

// listen opens the sockets of every configured address. On error it closes
// the sockets it opened.
func (set *socketSet) listen() error {
	for _, ap := range set.cfg.Listen {
		var (
			l   listener
			err error
		)
		if set.cfg.Socket != SocketPortable {
			l, err = listenBatch(ap, set.cfg)
		} else {
			l, err = listenPortable(ap, set.cfg)
		}
		if err != nil {
			set.closeListeners()
			return fmt.Errorf("listen %s: %w", ap, err)
		}
		set.listeners = append(set.listeners, l)
		set.cfg.Logger.Info("listening", "udp", l.localAddr().String(), "socket", set.cfg.Socket, "workers", set.cfg.Workers)
	}
	return nil
}

// addrs returns the bound local addresses.
func (set *socketSet) addrs() []netip.AddrPort {
	out := make([]netip.AddrPort, 0, len(set.listeners))
	for _, l := range set.listeners {
		out = append(out, l.localAddr())
	}
	return out
}

// start runs the receive loops, handing their datagrams to p.
func (set *socketSet) start(p pipeline) {
	for _, l := range set.listeners {
		l.start(set, p)
	}
}

// close closes the sockets and waits for the receive loops to end.
func (set *socketSet) close() {
	if set.closed.Swap(true) {
		return
	}
	set.closeListeners()
	set.wg.Wait()
}

func (set *socketSet) closeListeners() {
	for _, l := range set.listeners {
		l.close()
	}
}

// sender returns a Sender over the first socket of family's address family,
// or nil.
func (set *socketSet) sender(family netip.Addr) Sender {
	for _, l := range set.listeners {
		if l.localAddr().Addr().Unmap().Is4() == family.Unmap().Is4() {
			return l.sender()
		}
	}
	return nil
}

// Sockets is queryd's UDP socket layer on its own: the sockets and receive
// loops a Server runs on, handing every datagram its Handler claims straight
// to it and sending what it returns, with none of the Server's work (no
// budgets, no packet rate, no metrics, no stale check, no relay, no panic
// recovery). queryd-bench's fixed-reply server measures the layer with it.
type Sockets struct {
	set     socketSet
	h       Handler
	metrics *Metrics // unregistered: the receive loops' error counters
}

// NewSockets makes the socket layer (no sockets yet) answering with h.
func NewSockets(cfg SocketConfig, h Handler) (*Sockets, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m, err := NewMetrics(nil)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return &Sockets{set: socketSet{cfg: cfg}, h: h, metrics: m}, nil
}

// Listen opens the sockets of every configured address. On error it closes
// the sockets it opened.
func (s *Sockets) Listen() error { return s.set.listen() }

// Addrs returns the bound local addresses (useful with port 0).
func (s *Sockets) Addrs() []netip.AddrPort { return s.set.addrs() }

// Start runs the receive loops in the background.
func (s *Sockets) Start() { s.set.start(s) }

// Close closes the sockets and waits for the receive loops to end.
func (s *Sockets) Close() error {
	s.set.close()
	return nil
}

func (s *Sockets) newSession() *session {
	return &session{stats: s.metrics.newWorker(), out: make([][]byte, 0, 64)}
}

func (s *Sockets) beginBatch(*session, time.Time) {}

func (s *Sockets) process(ss *session, req, scratch []byte, src netip.AddrPort, _ []byte, _ Sender) [][]byte {
	if !s.h.Claims(req) {
		return nil
	}
	out, _ := s.h.Answer(req, src, scratch, ss.out[:0])
	return out
}

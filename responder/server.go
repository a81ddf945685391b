package responder

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Server.
type Config struct {
	Listen     []string // UDP addresses, "0.0.0.0:27015", "[::]:27015"
	Workers    int      // receive goroutines per socket; 0 means GOMAXPROCS
	RecvBuffer int      // SO_RCVBUF in bytes; 0 keeps the system default
	Limits     Limits
	// Silent, when set, is asked for every datagram; while it returns true
	// (the feed is stale) nothing is answered.
	Silent func(now time.Time) bool
	// Forward, when set, takes the datagrams no handler claims (relay mode).
	Forward  Forwarder
	Logger   *slog.Logger
	Registry prometheus.Registerer
}

// Server is queryd's UDP front: sockets, demux, budgets, metrics.
type Server struct {
	cfg     Config
	log     *slog.Logger
	metrics *Metrics
	route   atomic.Pointer[routing]
	limit   atomic.Pointer[limiter]
	conns   []*net.UDPConn
	wg      sync.WaitGroup
	closed  atomic.Bool
}

// routing is the immutable pairing of a router with the metrics rows of its
// handlers; it is swapped whole on reload.
type routing struct {
	router  *Router
	rows    [][numOutcomes]prometheus.Counter // per handler, then "unknown" last
	in, out []prometheus.Counter
}

// New makes a server (no sockets yet) answering with handlers.
func New(cfg Config, handlers ...Handler) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	m, err := NewMetrics(cfg.Registry, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, metrics: m}
	if err := s.SetLimits(cfg.Limits); err != nil {
		return nil, err
	}
	s.SetHandlers(handlers...)
	return s, nil
}

// SetHandlers replaces the protocol handlers (on reload); queries in flight
// finish with the old ones.
func (s *Server) SetHandlers(handlers ...Handler) {
	rt := &routing{router: NewRouter(handlers...)}
	names := make([]string, 0, len(handlers)+1)
	for _, h := range handlers {
		names = append(names, h.Name())
	}
	names = append(names, "unknown")
	for _, n := range names {
		i := s.metrics.row(n)
		s.metrics.mu.Lock()
		rt.rows = append(rt.rows, s.metrics.counters[i])
		rt.in = append(rt.in, s.metrics.in[i])
		rt.out = append(rt.out, s.metrics.out[i])
		s.metrics.mu.Unlock()
	}
	s.route.Store(rt)
}

// SetLimits replaces the byte budgets (on reload); the per-IP state starts afresh.
func (s *Server) SetLimits(l Limits) error {
	lim, err := newLimiter(l)
	if err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	s.limit.Store(lim)
	return nil
}

// Listen opens a UDP socket on every configured address. On error it closes
// the sockets it opened.
func (s *Server) Listen() error {
	for _, a := range s.cfg.Listen {
		c, err := listenUDP(a, s.cfg.RecvBuffer)
		if err != nil {
			s.closeConns()
			return fmt.Errorf("listen %s: %w", a, err)
		}
		s.conns = append(s.conns, c)
		s.log.Info("listening", "udp", c.LocalAddr().String())
	}
	return nil
}

// Addrs returns the bound local addresses (useful with port 0).
func (s *Server) Addrs() []netip.AddrPort {
	out := make([]netip.AddrPort, 0, len(s.conns))
	for _, c := range s.conns {
		out = append(out, c.LocalAddr().(*net.UDPAddr).AddrPort())
	}
	return out
}

// Start runs the receive loops in the background.
func (s *Server) Start() {
	for _, c := range s.conns {
		for i := 0; i < s.cfg.Workers; i++ {
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serveConn(c)
			}()
		}
	}
}

// Close closes the sockets and waits for the receive loops to end.
func (s *Server) Close() error {
	s.closed.Store(true)
	s.closeConns()
	s.wg.Wait()
	return nil
}

func (s *Server) closeConns() {
	for _, c := range s.conns {
		c.Close()
	}
}

// Forwarder receives the datagrams no handler claims (relay mode). Forward
// must not block and must copy req if it keeps it.
type Forwarder interface {
	Forward(req []byte, src netip.AddrPort, local netip.Addr, back Sender)
}

// Sender sends datagrams out of one of the server's sockets.
type Sender interface {
	// SendFrom sends b to dst, from local when it is valid (the address a
	// client's datagrams arrived on), else from the address the kernel picks.
	SendFrom(b []byte, local netip.Addr, dst netip.AddrPort) error
}

type socketSender struct{ c *net.UDPConn }

func (s socketSender) SendFrom(b []byte, local netip.Addr, dst netip.AddrPort) error {
	var oob []byte
	if local.IsValid() {
		oob = controlFrom(make([]byte, 0, 64), local)
	}
	_, _, err := s.c.WriteMsgUDPAddrPort(b, oob, dst)
	return err
}

// SendTo sends b to dst from the first socket of dst's address family (for
// master-server heartbeats, so that the master's answer comes back to a
// socket queryd answers on).
func (s *Server) SendTo(b []byte, dst netip.AddrPort) error {
	for _, c := range s.conns {
		la := c.LocalAddr().(*net.UDPAddr).AddrPort().Addr()
		if la.Unmap().Is4() == dst.Addr().Unmap().Is4() {
			_, err := c.WriteToUDPAddrPort(b, netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port()))
			return err
		}
	}
	return fmt.Errorf("no UDP socket for %s", dst)
}

// Sender returns a Sender over the first socket of addr's family, or nil.
func (s *Server) Sender(family netip.Addr) Sender {
	for _, c := range s.conns {
		la := c.LocalAddr().(*net.UDPAddr).AddrPort().Addr()
		if la.Unmap().Is4() == family.Unmap().Is4() {
			return socketSender{c}
		}
	}
	return nil
}

// session is one receive loop's buffers, allocated once.
type session struct {
	buf      []byte
	oob      []byte
	replyOOB []byte
	scratch  []byte
	out      [][]byte
}

func newSession() *session {
	return &session{
		buf:      make([]byte, 65536),
		oob:      make([]byte, 256),
		replyOOB: make([]byte, 0, 64),
		scratch:  make([]byte, ScratchSize),
		out:      make([][]byte, 0, 64),
	}
}

func (s *Server) serveConn(c *net.UDPConn) {
	ss := newSession()
	for {
		n, oobn, flags, src, err := c.ReadMsgUDPAddrPort(ss.buf, ss.oob)
		if err != nil {
			if s.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			s.metrics.recvErr.Inc()
			continue
		}
		if flags&msgTrunc != 0 {
			s.metrics.truncated.Inc()
			continue
		}
		s.handle(c, ss, ss.buf[:n], ss.oob[:oobn], src, time.Now())
	}
}

// handle answers one datagram: route, serve, budget, send, count.
func (s *Server) handle(c *net.UDPConn, ss *session, req, oob []byte, src netip.AddrPort, now time.Time) {
	rt := s.route.Load()
	idx, h := rt.router.Route(req)
	row := len(rt.rows) - 1
	if idx >= 0 {
		row = idx
	}
	rt.in[row].Add(float64(len(req)))
	if s.cfg.Silent != nil && s.cfg.Silent(now) {
		rt.rows[row][outSilent].Inc()
		return
	}
	if h == nil {
		if s.cfg.Forward != nil {
			s.cfg.Forward.Forward(req, src, localAddr(oob), socketSender{c})
			rt.rows[row][outForwarded].Inc()
			return
		}
		rt.rows[row][outUnknown].Inc()
		return
	}
	out, outcome := h.Serve(req, src, ss.scratch, ss.out[:0])
	size := 0
	for _, d := range out {
		size += len(d)
	}
	if size > 0 && !s.limit.Load().allow(src.Addr(), size, outcome.Proven(), now) {
		rt.rows[row][outRateLimited].Inc()
		return
	}
	rt.rows[row][outcome].Inc()
	if size == 0 {
		return
	}
	ss.replyOOB = replyControl(ss.replyOOB[:0], oob)
	for _, d := range out {
		if _, _, err := c.WriteMsgUDPAddrPort(d, ss.replyOOB, src); err != nil {
			s.metrics.sendErr.Inc()
			return
		}
	}
	rt.out[row].Add(float64(size))
}

package responder

import (
	"fmt"
	"log/slog"
	"math/bits"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/dgram"
)

// Config configures a Server.
type Config struct {
	Listen     []netip.AddrPort // UDP addresses: 0.0.0.0:27015, [::]:27015
	Socket     SocketLayer      // SocketAuto: SocketBatch on Linux, else SocketPortable
	Workers    int              // sockets (batch, uring) or goroutines (portable) per address; 0 means GOMAXPROCS
	RecvBuffer int              // SO_RCVBUF in bytes; 0 keeps the system default
	// DisableGSO keeps the batch and uring layers from sending a
	// multi-datagram answer as one UDP GSO send (UDP_SEGMENT; used when the
	// kernel has it; the portable layer never does).
	DisableGSO bool
	MaxRequest int // largest datagram read whole; 0 means 2,048 (65,535 with Forward)
	Limits     Limits
	// Host, when set, is the host-wide per-IP budget every server of the
	// process shares, drawn on after Limits' per-IP budget allows a reply;
	// a reply it refuses is counted as outcome "host_rate_limited".
	Host *HostBudget
	// Deny, when set, is [limits] deny: datagrams from its sources are
	// dropped, counted as outcome "denied" (relay traffic included).
	Deny *Deny
	// Silent, when set, is asked once per batch; while it returns true
	// queryd is silent (a source of the state is stale: the daemon's
	// silence rule) and nothing is answered (outcome "stale").
	Silent func(now time.Time) bool
	// Forward, when set, takes the datagrams no handler claims (relay mode).
	Forward Forwarder
	// Clock, when set, is set to the time at the start of every receive
	// batch, for handlers and the challenge issuer to read cheaply.
	Clock *dgram.Clock
	// Steer gives proven sources sockets of their own (SocketConfig.Steer).
	Steer SteerFunc
	// OnProven, when set, is called with a source's address each time a
	// reply answering a valid challenge token goes to it (the source has
	// proven its address). It runs on the receive loop: it must not block.
	OnProven func(netip.Addr)
	Logger   *slog.Logger
	Registry prometheus.Registerer
}

// sockets returns the socket layer's part of c.
func (c Config) sockets() SocketConfig {
	return SocketConfig{
		Listen:     c.Listen,
		Socket:     c.Socket,
		Workers:    c.Workers,
		RecvBuffer: c.RecvBuffer,
		DisableGSO: c.DisableGSO,
		MaxRequest: c.MaxRequest,
		Steer:      c.Steer,
		Logger:     c.Logger,
	}
}

// Server is queryd's UDP front: sockets, demux, budgets, metrics.
type Server struct {
	cfg      Config
	log      *slog.Logger
	metrics  *Metrics
	route    atomic.Pointer[routing]
	limit    atomic.Pointer[limiter]
	deny     atomic.Pointer[Deny]
	socks    socketSet
	sessions atomic.Int64 // receive loops made so far
	panics   panicLog     // recovered panics' log, at most one a second
	tops     sourceTables // the receive loops' busiest-sources tables (busiest.go)
	unclaim  unclaimedLog // unclaimed datagrams' debug log, at most one a second
	proven   *provenSet   // the proven sources (gate.go), kept across SetLimits
}

// listener is one configured address with its socket(s) and receive loops.
type listener interface {
	localAddr() netip.AddrPort
	start(set *socketSet, p pipeline)
	close()
	sender() Sender
}

// routing is the immutable pairing of a router with the metrics rows of its
// handlers; it is swapped whole on reload.
type routing struct {
	router *Router
	rows   []int            // metrics row per handler
	pkt    []*packetLimiter // per handler: its per-source request rate, or nil (pktrate.go)
}

// Forwarder receives the datagrams no handler claims (relay mode). Forward
// must not block and must copy req if it keeps it; it reports whether req
// went on (outcome "forwarded") or was dropped ("relay_dropped": the
// forwarder counts why).
type Forwarder interface {
	Forward(req []byte, src netip.AddrPort, local netip.Addr, back Sender) bool
}

// Sender sends datagrams out of one of the server's sockets (dgram.Sender).
type Sender = dgram.Sender

// New makes a server (no sockets yet) answering with handlers.
func New(cfg Config, handlers ...Handler) (*Server, error) {
	if cfg.MaxRequest <= 0 && cfg.Forward != nil {
		cfg.MaxRequest = 65535
	}
	sc, err := cfg.sockets().withDefaults()
	if err != nil {
		return nil, err
	}
	cfg.Logger, cfg.Workers, cfg.Socket, cfg.MaxRequest = sc.Logger, sc.Workers, sc.Socket, sc.MaxRequest
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	m, err := NewMetrics(cfg.Registry)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, metrics: m, socks: socketSet{cfg: sc}, unclaim: newUnclaimedLog()}
	if s.proven, err = newProvenSet(cfg.Limits.TrackedIPs); err != nil {
		return nil, fmt.Errorf("proven sources: %w", err)
	}
	if err := s.SetLimits(cfg.Limits); err != nil {
		return nil, err
	}
	s.SetHandlers(handlers...)
	s.SetDeny(cfg.Deny)
	return s, nil
}

// SetDeny replaces the [limits] deny list (on reload); nil denies nothing.
func (s *Server) SetDeny(d *Deny) { s.deny.Store(d) }

// SetHandlers replaces the protocol handlers (on reload); queries in flight
// finish with the old ones.
func (s *Server) SetHandlers(handlers ...Handler) {
	rt := &routing{router: NewRouter(handlers...), pkt: packetLimiters(handlers, s.cfg.Limits.TrackedIPs)}
	for _, h := range handlers {
		rt.rows = append(rt.rows, s.metrics.row(h.Name()))
	}
	s.route.Store(rt)
}

// AddCounts adds src's counts (the XDP fast path's) to the server's
// requests and bytes metrics.
func (s *Server) AddCounts(src CountSource) { s.metrics.AddSource(src) }

// SetLimits replaces the byte budgets (on reload); the per-IP state starts afresh.
func (s *Server) SetLimits(l Limits) error {
	lim, err := newLimiter(l, s.cfg.Workers*max(len(s.cfg.Listen), 1))
	if err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	s.limit.Store(lim)
	return nil
}

// Listen opens the sockets of every configured address. On error it closes
// the sockets it opened.
func (s *Server) Listen() error { return s.socks.listen() }

// Addrs returns the bound local addresses (useful with port 0).
func (s *Server) Addrs() []netip.AddrPort { return s.socks.addrs() }

// Start runs the receive loops in the background.
func (s *Server) Start() { s.socks.start(s) }

// Close closes the sockets and waits for the receive loops to end.
func (s *Server) Close() error {
	s.socks.close()
	return nil
}

// SendTo sends b to dst from the first socket of dst's address family (for
// master-server heartbeats, so that the master's answer comes back to a
// socket queryd answers on).
func (s *Server) SendTo(b []byte, dst netip.AddrPort) error {
	snd := s.Sender(dst.Addr())
	if snd == nil {
		return fmt.Errorf("no UDP socket for %s", dst)
	}
	return snd.SendFrom(b, netip.Addr{}, netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port()))
}

// Sender returns a Sender over the first socket of family's address family,
// or nil.
func (s *Server) Sender(family netip.Addr) Sender { return s.socks.sender(family) }

// session is one receive loop's state: its counters and reusable buffers.
type session struct {
	id    int // which share of the unproven budget it draws on
	stats *workerStats
	pend  pending    // counts of the current batch, added to stats once per batch
	batch batchState // what the current batch's datagrams share
	row   int        // the metrics row of the datagram being answered (a panic is counted there)
	out   [][]byte

	key ipKey        // the source of the datagram being answered
	top *sourceTable // the busiest sources (busiest.go); nil: not counted
}

// pending holds one batch's counts in plain integers, so that a batch costs
// a few atomic additions rather than three per datagram.
type pending struct {
	req     [maxRows][numOutcomes]uint64
	in, out [maxRows]uint64
	rows    uint32 // bit r set: row r has counts
}

func (s *Server) newSession() *session {
	id := int(s.sessions.Add(1) - 1)
	return &session{id: id, stats: s.metrics.newWorker(), top: s.tops.add(), out: make([][]byte, 0, 64)}
}

// count records one datagram of row with outcome o, in and out bytes.
func (ss *session) count(row, o, in, out int) {
	ss.pend.req[row][o]++
	ss.pend.in[row] += uint64(in)
	ss.pend.out[row] += uint64(out)
	ss.pend.rows |= 1 << row
	ss.top.count(ss.key, o)
}

// flush adds the batch's counts to the session's metrics.
func (ss *session) flush() {
	p := &ss.pend
	for rows := p.rows; rows != 0; rows &= rows - 1 {
		r := bits.TrailingZeros32(rows)
		for o, n := range p.req[r] {
			if n != 0 {
				ss.stats.req[r][o].Add(n)
				p.req[r][o] = 0
			}
		}
		ss.stats.in[r].Add(p.in[r])
		ss.stats.out[r].Add(p.out[r])
		p.in[r], p.out[r] = 0, 0
	}
	p.rows = 0
	ss.top.end()
}

// batchState is what stays the same for every datagram of one receive batch.
type batchState struct {
	now    time.Time
	rt     *routing
	lim    *limiter
	host   *hostBuckets // the host-wide per-IP budget (nil: none)
	deny   *Deny
	silent bool
	debug  bool // the logger is at debug level
}

// beginBatch readies ss for a batch of datagrams received at now.
func (s *Server) beginBatch(ss *session, now time.Time) {
	ss.top.begin()
	b := &ss.batch
	*b = batchState{now: now, rt: s.route.Load(), lim: s.limit.Load(), host: s.cfg.Host.load(), deny: s.deny.Load()}
	if s.cfg.Clock != nil {
		s.cfg.Clock.Set(b.now)
	}
	if s.cfg.Silent != nil {
		b.silent = s.cfg.Silent(b.now)
	}
	b.debug = debugEnabled(s.log)
}

// process answers one datagram (answer). A panic on the way (in a handler,
// the Forwarder or the responder itself) is recovered, counted as outcome
// "panic" of the protocol being answered and logged at most once a second
// (recover.go); the datagram gets no answer and the receive loop goes on with
// the next one.
func (s *Server) process(ss *session, req, scratch []byte, src netip.AddrPort, oob []byte, back Sender) (out [][]byte) {
	defer func() {
		if v := recover(); v != nil {
			s.recovered(ss, v, req, src)
			out = nil
		}
	}()
	return s.answer(ss, req, scratch, src, oob, back)
}

// answer answers one datagram: route, deny, silence, the proven-source
// tier (gate.go), packet rate, the
// handler's Answer, budgets, count. It returns the
// datagrams to send (pointing into scratch or into the handlers' replies).
// Unclaimed datagrams go to the Forwarder when there is one.
func (s *Server) answer(ss *session, req, scratch []byte, src netip.AddrPort, oob []byte, back Sender) [][]byte {
	b := &ss.batch
	ss.row = 0
	ss.key = keyOf(src.Addr())
	idx, h := b.rt.router.Route(req)
	row := 0
	if idx >= 0 {
		row = b.rt.rows[idx]
		ss.row = row
	}
	if b.deny != nil && b.deny.Contains(src.Addr()) {
		ss.count(row, outDenied, len(req), 0)
		return nil
	}
	if h == nil && s.cfg.Forward != nil { // relay mode: game traffic passes even while queryd is silent
		out := outForwarded
		if !s.cfg.Forward.Forward(req, src, localAddr(oob), back) {
			out = outRelayDropped
		}
		ss.count(row, out, len(req), 0)
		return nil
	}
	if b.silent {
		ss.count(row, outSilent, len(req), 0)
		return nil
	}
	if h == nil {
		if b.debug {
			s.unclaim.log(s.log, req, src)
		}
		ss.count(row, outUnknown, len(req), 0)
		return nil
	}
	key := ss.key
	if s.shed(ss, h, req, src) {
		ss.count(row, outUnprovenShed, len(req), 0)
		return nil
	}
	if !b.rt.pkt[idx].allow(key, b.now) {
		ss.count(row, outRateLimited, len(req), 0)
		return nil
	}
	out, outcome := h.Answer(req, src, scratch, ss.out[:0])
	size := 0
	for _, d := range out {
		size += len(d)
	}
	// Only replies that can amplify (larger than their request) to a source
	// that has not proven its address draw on the global unproven budget;
	// challenges never do, so a spoofed flood cannot starve real clients of them.
	amplifies := !outcome.Proven() && size > len(req)
	if size > 0 {
		if refused := b.lim.allow(key, size, !amplifies, b.now, ss.id, b.host); refused != allowed {
			ss.count(row, refused, len(req), 0)
			return nil
		}
	}
	s.afterAnswer(ss, src, outcome, size > 0)
	ss.count(row, int(outcome), len(req), size)
	return out
}

package responder

import (
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// recovered counts and logs a panic v recovered while serving req from src:
// the datagram is counted with outcome "panic" under the protocol that
// claimed it ("unknown" when none had yet).
func (s *Server) recovered(ss *session, v any, req []byte, src netip.AddrPort) {
	ss.count(ss.row, outPanic, len(req), 0)
	s.panics.log(s.log, s.metrics.name(ss.row), v, req, src)
}

// panicLog logs recovered panics, at most one a second: a flood of datagrams
// that make a handler panic must not turn into a flood of stack traces. The
// ones not logged are counted and reported with the next one logged.
type panicLog struct {
	next       atomic.Int64 // unix nanoseconds before which nothing more is logged
	suppressed atomic.Int64 // panics not logged since the last one that was
}

// panicLogEvery is the least time between two logged panics.
const panicLogEvery = time.Second

// panicLogRequest is how many of the request's first bytes are logged.
const panicLogRequest = 64

// log logs panic v with its stack (call it from the deferred function that
// recovered v, so that the stack is the panicking one), unless one was
// logged less than panicLogEvery ago.
func (p *panicLog) log(l *slog.Logger, protocol string, v any, req []byte, src netip.AddrPort) {
	now := time.Now().UnixNano()
	next := p.next.Load()
	if now < next || !p.next.CompareAndSwap(next, now+int64(panicLogEvery)) {
		p.suppressed.Add(1)
		return
	}
	l.Error("panic while serving a datagram: recovered, the datagram dropped",
		"protocol", protocol,
		"panic", fmt.Sprint(v),
		"src", src.String(),
		"request_len", len(req),
		"request_hex", hex.EncodeToString(req[:min(len(req), panicLogRequest)]),
		"not_logged_since_last", p.suppressed.Swap(0),
		"stack", string(debug.Stack()))
}

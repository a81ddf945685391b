package responder

import (
	"net/netip"

	"github.com/queryd/queryd/dgram"
)

// Handler answers the datagrams of one protocol. Implementations must be safe
// for concurrent use and must not block.
type Handler interface {
	// Name is the protocol's label in metrics and logs ("a2s").
	Name() string
	// Claims reports whether a datagram belongs to this protocol, from its
	// first bytes.
	Claims(p []byte) bool
	// Answer answers req from src by appending reply datagrams to out. The
	// datagrams may point into scratch (ScratchSize bytes) or into the
	// handler's own immutable buffers; they are sent before the next call
	// with the same scratch.
	Answer(req []byte, src netip.AddrPort, scratch []byte, out [][]byte) ([][]byte, dgram.Outcome)
}

// ScratchSize is the size of the scratch buffer a Handler may write replies
// into (dgram.ScratchSize).
const ScratchSize = dgram.ScratchSize

// Router picks the handler for a datagram. The first handler that claims it wins.
type Router struct {
	handlers []Handler
}

// NewRouter makes a router over handlers, tried in order.
func NewRouter(handlers ...Handler) *Router {
	return &Router{handlers: handlers}
}

// Route returns the index and handler that claim p, or -1 and nil.
func (r *Router) Route(p []byte) (int, Handler) {
	for i, h := range r.handlers {
		if h.Claims(p) {
			return i, h
		}
	}
	return -1, nil
}

// Handlers returns the router's handlers in order.
func (r *Router) Handlers() []Handler { return r.handlers }

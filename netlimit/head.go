package netlimit

import "sync/atomic"

// Bits of requestHead.
const (
	headReading uint32 = 1 << iota // the server has started reading the connection
	headIn                         // the blank line that ends a request's head has been read
	headSeen                       // a byte other than CR or LF has been read (a request line began)
	headNL                         // one line feed since the last other byte; two: headIn
)

// requestHead follows what the server has read of a connection's current
// request head, so that a Shedder closes only connections that have had
// their chance: one the server has not read yet (its goroutine not yet
// run, on a busy machine) may hold a whole request, and one whose head has
// been read is being answered (proven, or refused and closed). What is
// left to shed is a connection the server waits on for its head.
type requestHead struct{ bits atomic.Uint32 }

// reading marks that a read is starting.
func (h *requestHead) reading() {
	if h.bits.Load()&headReading == 0 {
		h.bits.Or(headReading)
	}
}

// read scans what a read returned for the blank line that ends a head
// (LF LF, CRs ignored, after a request line began). Reads are never
// concurrent (the server reads one at a time).
func (h *requestHead) read(p []byte) {
	b := h.bits.Load()
	if b&headIn != 0 {
		return
	}
	nl := (b / headNL) & 3
	seen := b&headSeen != 0
	for _, c := range p {
		switch c {
		case '\r':
		case '\n':
			nl++
		default:
			seen, nl = true, 0
		}
		if seen && nl >= 2 {
			h.bits.Store(headReading | headIn)
			return
		}
	}
	b = headReading | nl*headNL
	if seen {
		b |= headSeen
	}
	h.bits.Store(b)
}

// next forgets the head read: the connection waits for its next request.
func (h *requestHead) next() { h.bits.Store(headReading) }

// waiting reports whether the server is reading the connection and has not
// had a whole head from it yet.
func (h *requestHead) waiting() bool {
	b := h.bits.Load()
	return b&headReading != 0 && b&headIn == 0
}

// unread reports whether the server has not started reading the
// connection yet.
func (h *requestHead) unread() bool { return h.bits.Load()&headReading == 0 }

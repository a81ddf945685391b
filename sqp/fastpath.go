package sqp

import (
	"time"

	"github.com/queryd/queryd/module"
)

// FastReplies hands the XDP fast path the challenge reply (token bytes
// zero: the fast path writes the source's token) and, for every chunks
// byte whose reply is one datagram, that reply with a zero token (the fast
// path copies the query's): what Answer sends, byte for byte. A query whose
// reply takes several datagrams is passed to the socket path.
func (h *Handler) FastReplies(now time.Time, put func(module.FastReply)) {
	enc := h.enc.Load()
	if enc == nil {
		return
	}
	put(module.FastReply{Query: FastChallenge, Reply: make([]byte, ChallengeLen)})
	for c := range enc.plans {
		p := &enc.plans[c]
		if p.packets != 1 {
			continue
		}
		d := p.write(0, make([]byte, HeaderLen+p.size), nil)
		put(module.FastReply{Query: FastQuery, Index: c, Reply: d[0]})
	}
}

// The replies' slots in the fast path's handler (xdp/bpf/sqp.h, enum
// sqp_slot).
const (
	// FastChallenge is the challenge reply (to 00 00 00 00 00) with its
	// token bytes (1–4) zero: the program writes the source's token there,
	// big-endian. Its presence enables the queries.
	FastChallenge module.FastQuery = "challenge"
	// FastQuery is the range of the query replies, FastReply.Index the
	// chunks byte (below FastChunks): sent to a query with a valid token
	// when the reply is one datagram, with the query's token copied to its
	// bytes 1–4 (left zero).
	FastQuery module.FastQuery = "query"
)

// FastChunks is how many chunks bytes the fast path's program has a slot
// for (SQP_QUERY … SQP_QUERY_LAST): the chunks byte's five known bits.
const FastChunks = 32

var _ module.FastPath = (*Handler)(nil)

package sqp

import (
	"time"

	"github.com/queryd/queryd/module"
)

// FastReplies hands the XDP fast path the challenge reply (token bytes
// zero: the fast path writes the source's token) and, for every chunks
// byte whose reply is one datagram, that reply with a zero token (the fast
// path copies the query's): what Serve sends, byte for byte. A query whose
// reply takes several datagrams is passed to the socket path.
func (h *Handler) FastReplies(now time.Time, put func(module.FastReply)) {
	enc := h.enc.Load()
	if enc == nil {
		return
	}
	put(module.FastReply{Query: module.FastSQPChallenge, Reply: make([]byte, ChallengeLen)})
	for c := range enc.plans {
		p := &enc.plans[c]
		if p.packets != 1 {
			continue
		}
		d := p.write(0, make([]byte, HeaderLen+p.size), nil)
		put(module.FastReply{Query: module.FastSQPQuery(byte(c)), Reply: d[0]})
	}
}

var _ module.FastPath = (*Handler)(nil)

package gamespy4

import (
	"time"

	"github.com/queryd/queryd/module"
)

// FastReplies hands the XDP fast path the basic and full stat replies, with
// the session id bytes zero (the fast path copies the client's there), when
// they fit its largest reply. The handshake is made in the kernel.
func (h *Handler) FastReplies(now time.Time, put func(module.FastReply)) {
	enc := h.enc.Load()
	if enc == nil {
		return
	}
	put(module.FastReply{Query: module.FastGS4Basic, Reply: statReply(enc.basic)})
	put(module.FastReply{Query: module.FastGS4Full, Reply: statReply(enc.full)})
}

// statReply is a stat reply with a zero session id.
func statReply(body []byte) []byte {
	b := make([]byte, HeaderLen+len(body))
	b[0] = TypeStat
	copy(b[HeaderLen:], body)
	return b
}

var _ module.FastPath = (*Handler)(nil)

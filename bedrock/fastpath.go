package bedrock

import (
	"time"

	"github.com/queryd/queryd/module"
)

// FastReplies hands the XDP fast path the pong with a zero time (the fast
// path copies the ping's there), Open: RakNet's ping proves nothing, so the
// fast path applies PacketLimit and the unproven budget as the responder
// does.
func (h *Handler) FastReplies(now time.Time, put func(module.FastReply)) {
	if p := h.Pong(); p != nil {
		put(module.FastReply{Query: module.FastBedrockPong, Reply: p, Open: true})
	}
}

var _ module.FastPath = (*Handler)(nil)

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
		put(module.FastReply{Query: FastPong, Reply: p, Open: true})
	}
}

// FastPong names the pong's slot in the fast path's handler
// (xdp/bpf/bedrock.h, enum bedrock_slot): the unconnected pong, Open, with
// its time bytes (1–8) zero: the program copies the ping's there. It
// applies the protocol's PacketLimit (dgram.PacketLimited) and the
// unproven budget, as the responder does.
const FastPong module.FastQuery = "pong"

var _ module.FastPath = (*Handler)(nil)

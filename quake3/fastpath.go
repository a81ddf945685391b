package quake3

import (
	"time"

	"github.com/queryd/queryd/module"
)

// FastReplies hands the XDP fast path the infoResponse and statusResponse
// sent to getinfo and getstatus without a challenge argument (with one, the
// reply echoes it: the socket path answers those). Both are open: Quake 3
// has no challenge, so the fast path applies PacketLimit and the unproven
// budget as the responder does.
func (h *Handler) FastReplies(now time.Time, put func(module.FastReply)) {
	enc := h.enc.Load()
	if enc == nil {
		return
	}
	put(module.FastReply{Query: FastInfo, Reply: enc.info, Open: true})
	put(module.FastReply{Query: FastStatus, Reply: enc.status, Open: true})
}

// The replies' slots in the fast path's handler (xdp/bpf/quake3.h, enum
// quake3_slot).
const (
	FastInfo   module.FastQuery = "info"   // getinfo without a challenge argument
	FastStatus module.FastQuery = "status" // getstatus without a challenge argument
)

var _ module.FastPath = (*Handler)(nil)

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
	put(module.FastReply{Query: FastBasic, Reply: statReply(enc.basic)})
	put(module.FastReply{Query: FastFull, Reply: statReply(enc.full)})
}

// statReply is a stat reply with a zero session id.
func statReply(body []byte) []byte {
	b := make([]byte, HeaderLen+len(body))
	b[0] = TypeStat
	copy(b[HeaderLen:], body)
	return b
}

// The replies' slots in the fast path's handler (xdp/bpf/gamespy4.h, enum
// gamespy4_slot); its presence of FastBasic enables the handshake there.
const (
	FastBasic module.FastQuery = "basic" // basic stat with a valid token
	FastFull  module.FastQuery = "full"  // full stat with a valid token
)

var _ module.FastPath = (*Handler)(nil)

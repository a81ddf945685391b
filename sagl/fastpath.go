package sagl

import (
	"time"

	"github.com/queryd/queryd/module"
)

// FastReplies hands the XDP fast path the challenge with a zero token (the
// fast path writes the source's) and, when the JSON is one part, the info
// reply to a valid request. Logo pieces and JSON of several parts are
// passed to the socket path.
func (h *Handler) FastReplies(now time.Time, put func(module.FastReply)) {
	e := h.enc.Load()
	if e == nil {
		return
	}
	put(module.FastReply{Query: FastChallenge, Reply: PutChallenge(make([]byte, ChallengeSize), 0)})
	if len(e.parts) == 1 {
		put(module.FastReply{Query: FastInfo, Reply: e.parts[0]})
	}
}

// The replies' slots in the fast path's handler (xdp/bpf/sagl.h, enum
// sagl_slot).
const (
	// FastChallenge is the 12-byte challenge with its token bytes (8–11)
	// zero: the program writes the source's token there, little-endian,
	// for a request without a valid token.
	FastChallenge module.FastQuery = "challenge"
	// FastInfo is the info reply to a request of kind 1 with a valid
	// token, when the JSON is one part.
	FastInfo module.FastQuery = "info"
)

var _ module.FastPath = (*Handler)(nil)

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
	put(module.FastReply{Query: module.FastSAGLChallenge, Reply: PutChallenge(make([]byte, ChallengeSize), 0)})
	if len(e.parts) == 1 {
		put(module.FastReply{Query: module.FastSAGLInfo, Reply: e.parts[0]})
	}
}

var _ module.FastPath = (*Handler)(nil)

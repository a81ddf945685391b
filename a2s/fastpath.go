package a2s

import (
	"time"

	"github.com/queryd/queryd/module"
)

// FastReplies hands the XDP fast path the replies it may send: A2S_INFO
// (also without a token when info_challenge is off), and A2S_PLAYER and
// A2S_RULES when they fit one datagram. The PLAYER reply is the one Answer
// sends this second (the same per-second cache).
func (h *Handler) FastReplies(now time.Time, put func(module.FastReply)) {
	enc := h.enc.Load()
	if enc == nil {
		return
	}
	put(module.FastReply{Query: FastInfo, Reply: enc.info[0], Open: !h.cfg.InfoChallenge})
	if len(enc.rules) == 1 {
		put(module.FastReply{Query: FastRules, Reply: enc.rules[0]})
	}
	if pr := h.playerReply(enc); len(pr.dgrams) == 1 {
		put(module.FastReply{Query: FastPlayer, Reply: pr.dgrams[0]})
	}
}

// The replies' slots in the fast path's handler (xdp/bpf/a2s.h, enum
// a2s_slot).
const (
	FastInfo   module.FastQuery = "info"   // A2S_INFO: with a valid token, or without when Open
	FastPlayer module.FastQuery = "player" // A2S_PLAYER with a valid token
	FastRules  module.FastQuery = "rules"  // A2S_RULES with a valid token
)

var _ module.FastPath = (*Handler)(nil)

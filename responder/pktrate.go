package responder

import (
	"time"

	"golang.org/x/time/rate"

	"github.com/queryd/queryd/dgram"
)

// PacketLimited is a handler with a per-source request rate (dgram.PacketLimited).
type PacketLimited = dgram.PacketLimited

// defaultTrackedSources bounds a packet limiter's memory when Limits set none.
const defaultTrackedSources = 65536

// packetLimiter is one handler's per-source request rate: a token bucket
// per source (buckets.go), one token per request.
type packetLimiter struct {
	buckets *sourceBuckets
}

// packetLimiters returns, per handler, its packet limiter or nil.
func packetLimiters(handlers []Handler, tracked int) []*packetLimiter {
	out := make([]*packetLimiter, len(handlers))
	for i, h := range handlers {
		out[i] = newPacketLimiter(h, tracked)
	}
	return out
}

// newPacketLimiter returns h's packet limiter, or nil when h asks for none.
func newPacketLimiter(h Handler, tracked int) *packetLimiter {
	pl, ok := h.(PacketLimited)
	if !ok {
		return nil
	}
	r, burst := pl.PacketLimit()
	if r <= 0 {
		return nil
	}
	if tracked < 16 {
		tracked = defaultTrackedSources
	}
	b, err := newSourceBuckets(rate.Limit(r), max(burst, 1), tracked)
	if err != nil { // only for a size below 1
		return nil
	}
	return &packetLimiter{buckets: b}
}

// allow reports whether one more request from source k may be served now.
// A nil limiter allows everything.
func (p *packetLimiter) allow(k ipKey, now time.Time) bool {
	if p == nil {
		return true
	}
	return p.buckets.allowN(k, 1, now)
}

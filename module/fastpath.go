package module

import "time"

// FastPath is implemented by a Protocol whose hottest single-datagram
// queries the optional XDP fast path (package xdp) may answer in the
// network driver. The fast path knows the request formats of these queries
// (it parses them in the kernel); the protocol hands it the replies, exactly
// as its Serve sends them, and says which it may answer without a token.
type FastPath interface {
	// FastReplies calls put once for each query the fast path may answer as
	// of now, with its reply. A query left out (its reply does not fit one
	// datagram, or the protocol does not serve it) is passed to the socket
	// path. It is called on every new snapshot and once a second, outside
	// the store's lock and off the hot path.
	FastReplies(now time.Time, put func(FastReply))
}

// FastQuery names a query the fast path can answer.
type FastQuery string

// The queries the fast path knows (its eBPF program parses their requests).
const (
	FastA2SInfo   FastQuery = "a2s_info"   // A2S_INFO: with a valid token, or without when Open
	FastA2SPlayer FastQuery = "a2s_player" // A2S_PLAYER with a valid token
	FastA2SRules  FastQuery = "a2s_rules"  // A2S_RULES with a valid token
	FastGS4Basic  FastQuery = "gs4_basic"  // GameSpy4 basic stat with a valid token (its presence enables the handshake)
	FastGS4Full   FastQuery = "gs4_full"   // GameSpy4 full stat with a valid token
	FastQ3Info    FastQuery = "q3_info"    // Quake 3 getinfo without a challenge argument
	FastQ3Status  FastQuery = "q3_status"  // Quake 3 getstatus without a challenge argument
)

// FastReply is one pre-encoded reply for the fast path.
type FastReply struct {
	Query FastQuery
	// Reply is the one datagram Serve sends for the query. GameSpy4's stat
	// replies carry the client's session id at bytes 1–4: leave them zero,
	// the fast path copies the request's there.
	Reply []byte
	// Open: the reply goes to sources that presented no valid token (A2S_INFO
	// with [a2s] info_challenge off; Quake 3, which has no challenge).
	Open bool
}

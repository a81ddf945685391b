package module

import (
	"strconv"
	"time"
)

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

	// FastSQPChallenge is the SQP challenge reply (to 00 00 00 00 00) with
	// its token bytes (1–4) zero: the fast path writes the source's token
	// there, big-endian. Its presence enables the SQP queries (FastSQPQuery).
	FastSQPChallenge FastQuery = "sqp_challenge"
	// FastBedrockPong is the Bedrock unconnected pong, Open, with its time
	// bytes (1–8) zero: the fast path copies the ping's there. It applies
	// the protocol's PacketLimit (dgram.PacketLimited) and the unproven
	// budget, as the responder does.
	FastBedrockPong FastQuery = "bedrock_pong"
	// FastSAGLChallenge is the 12-byte SAGL challenge reply with its token
	// bytes (8–11) zero: the fast path writes the source's token there,
	// little-endian, for a request without a valid token.
	FastSAGLChallenge FastQuery = "sagl_challenge"
	// FastSAGLInfo is the SAGL info reply to a request of kind 1 with a
	// valid token, when the JSON is one part.
	FastSAGLInfo FastQuery = "sagl_info"
)

// FastSQPChunks is how many SQP chunk combinations FastSQPQuery names: the
// chunks byte's five known bits.
const FastSQPChunks = 32

// fastSQPQueries are FastSQPQuery's names, made once.
var fastSQPQueries = func() (q [FastSQPChunks]FastQuery) {
	for i := range q {
		q[i] = FastQuery("sqp_query_" + strconv.Itoa(i))
	}
	return q
}()

// FastSQPQuery names the SQP query reply to the chunks byte chunks (below
// FastSQPChunks), sent to a query with a valid token when the reply is one
// datagram. The reply's token bytes (1–4) are left zero: the fast path
// copies the query's there. A chunks byte of FastSQPChunks or more names
// nothing ("").
func FastSQPQuery(chunks byte) FastQuery {
	if int(chunks) >= FastSQPChunks {
		return ""
	}
	return fastSQPQueries[chunks]
}

// FastReply is one pre-encoded reply for the fast path.
type FastReply struct {
	Query FastQuery
	// Reply is the one datagram Serve sends for the query. Bytes the fast
	// path fills per request are left zero: GameSpy4's stat replies carry
	// the client's session id at bytes 1–4, SQP's query replies the query's
	// token at bytes 1–4, Bedrock's pong the ping's time at bytes 1–8 (the
	// fast path copies the request's there); the SQP and SAGL challenges'
	// token bytes (the fast path writes the source's token).
	Reply []byte
	// Open: the reply goes to sources that presented no valid token (A2S_INFO
	// with [a2s] info_challenge off; Quake 3, which has no challenge).
	Open bool
}

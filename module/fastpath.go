package module

import "time"

// FastPath is implemented by a Protocol whose hottest single-datagram
// queries the optional XDP fast path (package xdp) may answer in the
// network driver. The fast path's program has a handler for the protocol,
// named by its Name (xdp/bpf/NAME.h, one line in xdp/bpf/protocols.h: it
// parses the requests in the kernel); the protocol hands it the replies,
// exactly as its Answer sends them, and says which it may answer without a
// token. Nothing else names the protocol: the fast path's rows, labels,
// reply slots and packet rate come from the program's list, the Name and
// this capability (and dgram.PacketLimited).
type FastPath interface {
	// FastReplies calls put once for each query the fast path may answer as
	// of now, with its reply. A query left out (its reply does not fit one
	// datagram, or the protocol does not serve it) is passed to the socket
	// path. It is called on every new snapshot and once a second, outside
	// the store's lock and off the hot path.
	FastReplies(now time.Time, put func(FastReply))
}

// FastQuery names a reply slot of the protocol's handler in the fast
// path's program: its header's enum NAME_slot without the NAME_ prefix,
// in lower case (QUAKE3_STATUS in xdp/bpf/quake3.h is "status").
type FastQuery string

// FastReply is one pre-encoded reply for the fast path.
type FastReply struct {
	Query FastQuery
	// Index picks a slot of a range (the header's NAME_X … NAME_X_LAST:
	// SQP's query replies by chunks byte); 0 for a single slot.
	Index int
	// Reply is the one datagram Answer sends for the query. Bytes the
	// program fills per request are left zero (the handler says which:
	// a session, a token or a time copied from the request, a challenge's
	// token).
	Reply []byte
	// Open: the reply goes to sources that presented no valid token (A2S_INFO
	// with [a2s] info_challenge off; Quake 3, which has no challenge).
	Open bool
}

package sqp

import (
	"encoding/binary"
	"errors"
)

// Packet types: the first byte of every request and reply.
const (
	TypeChallenge = 0x00 // challenge request and reply
	TypeQuery     = 0x01 // query request and reply
)

// Version is the only query version queryd speaks and claims.
const Version = 1

// Chunk bits of a query's requested-chunks byte, and the order of the
// chunks in a reply.
const (
	ChunkServerInfo  = 0x01
	ChunkServerRules = 0x02
	ChunkPlayerInfo  = 0x04
	ChunkTeamInfo    = 0x08
	ChunkMetrics     = 0x10
	// AllChunks is every chunk queryd knows.
	AllChunks = ChunkServerInfo | ChunkServerRules | ChunkPlayerInfo | ChunkTeamInfo | ChunkMetrics
)

// Request sizes: SQP requests have exactly these lengths. The challenge
// request is padded to the size of its reply.
const (
	ChallengeLen = 5 // 00 00 00 00 00
	QueryLen     = 8 // 01 token(u32) version(u16) chunks(u8)
)

var (
	errNotSQP        = errors.New("sqp: not an SQP request (5 zero bytes, or 8 bytes of version 1)")
	errUnknownChunks = errors.New("sqp: unknown chunk bits")
)

// Request is one parsed SQP request.
type Request struct {
	Type   byte   // TypeChallenge or TypeQuery
	Token  uint32 // query: the challenge token
	Chunks byte   // query: the requested chunks (ChunkServerInfo | …)
}

// Claims reports whether p is an SQP request by its exact shape: five zero
// bytes (a challenge request), or eight bytes starting with 01 whose
// version (bytes 5 and 6) is 1 (a query). SQP's first bytes are too weak to
// claim anything looser: game traffic in relay mode must pass.
func Claims(p []byte) bool {
	switch len(p) {
	case ChallengeLen:
		return p[0] == TypeChallenge && p[1] == 0 && p[2] == 0 && p[3] == 0 && p[4] == 0
	case QueryLen:
		return p[0] == TypeQuery && p[5] == 0 && p[6] == Version
	}
	return false
}

// ParseRequest parses a datagram Claims accepts. A query asking for a chunk
// queryd does not know (a bit above ChunkMetrics) is an error: the client
// would read a reply without it wrongly.
func ParseRequest(p []byte) (Request, error) {
	if !Claims(p) {
		return Request{}, errNotSQP
	}
	if p[0] == TypeChallenge {
		return Request{Type: TypeChallenge}, nil
	}
	r := Request{Type: TypeQuery, Token: binary.BigEndian.Uint32(p[1:5]), Chunks: p[7]}
	if r.Chunks&^AllChunks != 0 {
		return Request{}, errUnknownChunks
	}
	return r, nil
}

// AppendQuery appends a query request for chunks with token to b.
func AppendQuery(b []byte, token uint32, chunks byte) []byte {
	b = append(b, TypeQuery)
	b = binary.BigEndian.AppendUint32(b, token)
	b = binary.BigEndian.AppendUint16(b, Version)
	return append(b, chunks)
}

// ChallengeRequest is the challenge request (padded to its reply's size).
var ChallengeRequest = [ChallengeLen]byte{TypeChallenge}

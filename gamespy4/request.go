package gamespy4

import (
	"encoding/binary"
	"errors"
)

// Magic is the first two bytes of every request.
var Magic = [2]byte{0xFE, 0xFD}

// Request (and reply) type bytes.
const (
	TypeStat      = 0x00 // basic or full stat
	TypeHandshake = 0x09 // challenge token request
)

// Request sizes. Longer requests are accepted: the bytes after the fields
// are ignored (gamedig sends 11-byte handshakes).
const (
	HandshakeLen = 7  // FE FD 09 <session>
	BasicLen     = 11 // FE FD 00 <session> <token>
	FullLen      = 15 // FE FD 00 <session> <token> <4 padding bytes>
)

// Wire tokens: the challenge issuer's token mapped into [TokenMin, TokenMax].
// Every wire token has at least 6 decimal digits (qstat rejects handshake
// replies shorter than 12 bytes) and fits a positive int32 (clients parse it
// with strconv.ParseInt(s, 10, 32) or as a Java int).
const (
	TokenMin = 100000
	TokenMax = 1<<31 - 1
)

var (
	errShort       = errors.New("gamespy4: request too short")
	errNotGameSpy4 = errors.New("gamespy4: not a GameSpy4 request (no FE FD)")
	errUnknownType = errors.New("gamespy4: unknown request type")
)

// Request is one parsed GameSpy4 request.
type Request struct {
	Type    byte    // TypeHandshake or TypeStat
	Session [4]byte // the client's session id, echoed exactly in the reply
	Token   uint32  // stat: the challenge token (int32 big-endian on the wire)
	Full    bool    // stat: the padded (15-byte or longer) form asks the full stat
}

// Claims reports whether p starts with the GameSpy4 magic FE FD.
func Claims(p []byte) bool {
	return len(p) >= 2 && p[0] == Magic[0] && p[1] == Magic[1]
}

// ParseRequest parses a request datagram. A handshake needs 7 bytes, a stat
// 11; a stat of 15 bytes or more is a full stat whatever its padding bytes
// are (clients send 00 00 00 00 or FF FF FF 01), one of 11 to 14 bytes is a
// basic stat. Further bytes are ignored.
func ParseRequest(p []byte) (Request, error) {
	if len(p) < 3 {
		return Request{}, errShort
	}
	if !Claims(p) {
		return Request{}, errNotGameSpy4
	}
	r := Request{Type: p[2]}
	switch r.Type {
	case TypeHandshake:
		if len(p) < HandshakeLen {
			return Request{}, errShort
		}
	case TypeStat:
		if len(p) < BasicLen {
			return Request{}, errShort
		}
		r.Token = binary.BigEndian.Uint32(p[7:11])
		r.Full = len(p) >= FullLen
	default:
		return Request{}, errUnknownType
	}
	copy(r.Session[:], p[3:7])
	return r, nil
}

// WireToken maps a challenge issuer token into the range GameSpy4 clients
// accept, [TokenMin, TokenMax].
func WireToken(t uint32) uint32 {
	return TokenMin + t%(TokenMax-TokenMin+1)
}

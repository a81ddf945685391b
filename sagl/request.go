package sagl

import (
	"encoding/binary"
	"errors"
)

// Wire constants of the SAGL query. Integers are little-endian.
const (
	// RequestSize is the exact size of every request (zero-padded).
	RequestSize = 64
	// Version is the only protocol version (byte 4 of requests and replies).
	Version = 1
	// KindChallenge is the reply kind of a challenge (never a request kind).
	KindChallenge = 0
	// KindInfo asks for, and answers with, the JSON in parts.
	KindInfo = 1
	// KindLogo asks for, and answers with, a piece of the logo.
	KindLogo = 2
	// ChallengeSize is the size of a challenge reply: header and u32 token.
	ChallengeSize = 12
	// MaxDatagram is the largest reply datagram.
	MaxDatagram = 1200
	// InfoHeader is the size of an info reply's header (before the JSON bytes).
	InfoHeader = 8 + 4 + 4 + 2 + 2
	// PartSize is the most JSON bytes one info part carries.
	PartSize = MaxDatagram - InfoHeader
	// MaxParts is the most parts one JSON may have (the u16 part count).
	MaxParts = 65535
	// LogoHeader is the size of a logo reply's header (before the logo bytes).
	LogoHeader = 8 + 4 + 4 + 32
	// LogoPiece is the most logo bytes one logo reply carries.
	LogoPiece = 1024
)

var (
	requestMagic = [4]byte{'S', 'A', 'G', 'Q'}
	replyMagic   = [4]byte{'S', 'A', 'G', 'R'}

	errSize    = errors.New("sagl: a request is exactly 64 bytes")
	errMagic   = errors.New("sagl: not a SAGQ request")
	errVersion = errors.New("sagl: unknown version")
	errKind    = errors.New("sagl: unknown request kind")
)

// Request is one parsed SAGL request.
type Request struct {
	Kind   byte   // KindInfo or KindLogo
	Token  uint32 // 0 the first time, then the token from the challenge
	Offset uint32 // KindLogo: the offset to read from
}

// Claims reports whether p starts like a SAGL request ("SAGQ").
func Claims(p []byte) bool {
	return len(p) >= 4 && [4]byte(p[:4]) == requestMagic
}

// ParseRequest parses a request datagram: exactly 64 bytes, "SAGQ", version
// 1, kind 1 or 2. The reserved u16 and the padding are not checked, so a
// later minor revision may use them.
func ParseRequest(p []byte) (Request, error) {
	if len(p) != RequestSize {
		return Request{}, errSize
	}
	if [4]byte(p[:4]) != requestMagic {
		return Request{}, errMagic
	}
	if p[4] != Version {
		return Request{}, errVersion
	}
	if p[5] != KindInfo && p[5] != KindLogo {
		return Request{}, errKind
	}
	return Request{
		Kind:   p[5],
		Token:  binary.LittleEndian.Uint32(p[8:]),
		Offset: binary.LittleEndian.Uint32(p[12:]),
	}, nil
}

// AppendRequest appends the 64-byte request r to b.
func AppendRequest(b []byte, r Request) []byte {
	var p [RequestSize]byte
	copy(p[:], requestMagic[:])
	p[4], p[5] = Version, r.Kind
	binary.LittleEndian.PutUint32(p[8:], r.Token)
	binary.LittleEndian.PutUint32(p[12:], r.Offset)
	return append(b, p[:]...)
}

package a2s

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// Request and reply type bytes (after the FF FF FF FF header).
const (
	TypeInfo         = 'T' // A2S_INFO request
	TypePlayer       = 'U' // A2S_PLAYER request
	TypeRules        = 'V' // A2S_RULES request
	TypeGetChallenge = 'W' // A2S_SERVERQUERY_GETCHALLENGE (deprecated)
	TypePing         = 'i' // A2A_PING (deprecated)
	TypeChallenge    = 'A' // S2C_CHALLENGE reply; also steamlogger's retry request
	ReplyInfo        = 'I'
	ReplyPlayer      = 'D'
	ReplyRules       = 'E'
	ReplyPing        = 'j'
)

// NoChallenge is the challenge value a client sends to ask for one (-1).
const NoChallenge uint32 = 0xFFFFFFFF

var (
	header         = []byte{0xFF, 0xFF, 0xFF, 0xFF}
	infoPayload    = []byte("Source Engine Query\x00")
	compatPayload  = []byte("SOURCE\x00") // the steamlogger client's A2S_INFO
	errShort       = errors.New("a2s: request too short")
	errNotA2S      = errors.New("a2s: not an A2S request")
	errBadInfo     = errors.New("a2s: A2S_INFO without the \"Source Engine Query\" payload")
	errCompatOff   = errors.New("a2s: compat request while compat is off")
	errUnknownType = errors.New("a2s: unknown request type")
)

// Request is one parsed A2S request.
type Request struct {
	Type      byte   // TypeInfo, TypePlayer, TypeRules, TypeGetChallenge, TypePing or TypeChallenge
	Challenge uint32 // the token the client sent; NoChallenge when none
	HasToken  bool   // a challenge field was present
	Compat    bool   // a steamlogger-style request ("SOURCE\0" or the 'A' retry)
}

// Claims reports whether p is an A2S request: the -1 header and one of the
// request type bytes queryd answers. The one-byte requests (A2A_PING,
// GETCHALLENGE) are claimed only when nothing but NUL padding follows, and
// the compat retry only at its exact 9 bytes, so that other connectionless
// packets on a shared port (Quake 3's "ipAuthorize …" in relay mode) are not
// taken for them.
func Claims(p []byte) bool {
	if len(p) < 5 || !bytes.Equal(p[:4], header) {
		return false
	}
	switch p[4] {
	case TypeInfo, TypePlayer, TypeRules:
		return true
	case TypeGetChallenge, TypePing:
		return allZero(p[5:])
	case TypeChallenge:
		return len(p) == 9
	}
	return false
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// ParseRequest parses an A2S request datagram. Bytes after a request's fields
// are accepted and ignored, as Valve's document asks. compat enables the
// steamlogger forms ("SOURCE\0" and the 'A' retry).
func ParseRequest(p []byte, compat bool) (Request, error) {
	if len(p) < 5 {
		return Request{}, errShort
	}
	if !bytes.Equal(p[:4], header) {
		return Request{}, errNotA2S
	}
	r := Request{Type: p[4], Challenge: NoChallenge}
	body := p[5:]
	switch r.Type {
	case TypeInfo:
		switch {
		case bytes.HasPrefix(body, infoPayload):
			body = body[len(infoPayload):]
		case bytes.HasPrefix(body, compatPayload):
			if !compat {
				return Request{}, errCompatOff
			}
			r.Compat = true
			body = body[len(compatPayload):]
		default:
			return Request{}, errBadInfo
		}
		if len(body) >= 4 {
			r.Challenge, r.HasToken = binary.LittleEndian.Uint32(body), true
		}
	case TypePlayer, TypeRules, TypeChallenge:
		if len(body) < 4 {
			return Request{}, errShort
		}
		if r.Type == TypeChallenge {
			if !compat {
				return Request{}, errCompatOff
			}
			r.Compat = true
		}
		r.Challenge, r.HasToken = binary.LittleEndian.Uint32(body), true
	case TypeGetChallenge, TypePing:
	default:
		return Request{}, errUnknownType
	}
	return r, nil
}

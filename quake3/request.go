package quake3

import (
	"bytes"
	"errors"
)

// Request types.
const (
	TypeInfo   = 'i' // getinfo
	TypeStatus = 's' // getstatus
)

// MaxChallenge is the longest challenge argument accepted, in bytes.
const MaxChallenge = 128

var (
	header       = []byte{0xFF, 0xFF, 0xFF, 0xFF}
	cmdInfo      = []byte("getinfo")
	cmdStatus    = []byte("getstatus")
	errShort     = errors.New("quake3: request too short")
	errNotQuake3 = errors.New("quake3: not a getinfo or getstatus request")
	errTrailing  = errors.New("quake3: unexpected bytes after the command")
	errLong      = errors.New("quake3: challenge longer than 128 bytes")
	errBadChar   = errors.New("quake3: challenge holds a character outside ASCII 33-126 or one of \\ ; \"")
)

// Request is one parsed getinfo or getstatus request.
type Request struct {
	Type byte // TypeInfo or TypeStatus
	// Challenge is the optional argument, a slice of the request (nil when
	// absent). It holds only printable ASCII without \ ; and ".
	Challenge []byte
}

// Claims reports whether p starts like a Quake 3 query: FF FF FF FF then
// "getinfo" or "getstatus" in any case. Claiming the whole prefix keeps
// broken queries from being relayed to a game server behind queryd.
func Claims(p []byte) bool {
	if len(p) < 4+len(cmdInfo) || !bytes.Equal(p[:4], header) {
		return false
	}
	return hasPrefixFold(p[4:], cmdInfo) || hasPrefixFold(p[4:], cmdStatus)
}

// ParseRequest parses a getinfo or getstatus datagram: the command in any
// case, then nothing, a "\n" or a NUL (anything after those is ignored), or a
// space and a challenge of 1 to 128 printable ASCII characters other than
// \ ; and " (spaces and a "\r" around it are trimmed).
func ParseRequest(p []byte) (Request, error) {
	if len(p) < 4+len(cmdInfo) {
		return Request{}, errShort
	}
	if !bytes.Equal(p[:4], header) {
		return Request{}, errNotQuake3
	}
	body := p[4:]
	var r Request
	switch {
	case hasPrefixFold(body, cmdStatus):
		r.Type, body = TypeStatus, body[len(cmdStatus):]
	case hasPrefixFold(body, cmdInfo):
		r.Type, body = TypeInfo, body[len(cmdInfo):]
	default:
		return Request{}, errNotQuake3
	}
	if i := bytes.IndexAny(body, "\n\x00"); i >= 0 {
		body = body[:i]
	}
	if len(body) == 0 {
		return r, nil
	}
	if body[0] != ' ' && body[0] != '\t' && body[0] != '\r' {
		return Request{}, errTrailing
	}
	arg := bytes.Trim(body, " \t\r")
	if len(arg) == 0 {
		return r, nil
	}
	if len(arg) > MaxChallenge {
		return Request{}, errLong
	}
	for _, c := range arg {
		if c < 33 || c > 126 || c == '\\' || c == ';' || c == '"' {
			return Request{}, errBadChar
		}
	}
	r.Challenge = arg
	return r, nil
}

// hasPrefixFold reports whether p starts with the lower-case ASCII word w in
// any case.
func hasPrefixFold(p, w []byte) bool {
	if len(p) < len(w) {
		return false
	}
	for i, c := range w {
		if p[i]|0x20 != c {
			return false
		}
	}
	return true
}

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

// Claims reports whether p is a Quake 3 query: exactly the datagrams
// ioquake3's own parser reads as getinfo or getstatus (command: the first
// token of the line after FF FF FF FF, in any case, after any whitespace
// or comment, quoted or not: " getstatus", "\tgetinfo", "\"getstatus\"").
// "getinfox" is not one (the stock server does not answer it): in relay
// and divert mode it goes to the game server, as the XDP program's claim
// leaves it (xdp/bpf/quake3.h, which takes exactly this set).
func Claims(p []byte) bool {
	if len(p) < 4+len(cmdInfo) || !bytes.Equal(p[:4], header) {
		return false
	}
	argv0, _, _ := command(p)
	return isWord(argv0, cmdInfo) || isWord(argv0, cmdStatus)
}

// ParseRequest parses a getinfo or getstatus datagram as ioquake3 reads
// it (command): the command is the line's first token, in any case; the
// challenge its second token (what follows is ignored), of 1 to 128
// printable ASCII characters other than \ ; and " (dpmaster's rule; an
// empty one is none). A datagram that starts with the command glued to
// more ("getinfox", which Claims does not take) is malformed.
func ParseRequest(p []byte) (Request, error) {
	if len(p) < 4+len(cmdInfo) {
		return Request{}, errShort
	}
	argv0, argv1, ok := command(p)
	if !ok {
		return Request{}, errNotQuake3
	}
	var r Request
	switch {
	case isWord(argv0, cmdStatus):
		r.Type = TypeStatus
	case isWord(argv0, cmdInfo):
		r.Type = TypeInfo
	case hasPrefixFold(p[4:], cmdInfo) || hasPrefixFold(p[4:], cmdStatus):
		return Request{}, errTrailing
	default:
		return Request{}, errNotQuake3
	}
	if len(argv1) == 0 {
		return r, nil
	}
	if len(argv1) > MaxChallenge {
		return Request{}, errLong
	}
	for _, c := range argv1 {
		if c < 33 || c > 126 || c == '\\' || c == ';' || c == '"' {
			return Request{}, errBadChar
		}
	}
	r.Challenge = argv1
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

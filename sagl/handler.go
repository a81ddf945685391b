package sagl

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/state"
)

// DefaultMaxList is the default budget of the players list in the JSON: a
// longer list is cut short with "truncated": true. 64 KiB holds about a
// thousand players with short names.
const DefaultMaxList = 64 << 10

// Config is the SAGL responder's configuration.
type Config struct {
	Players PlayersMode // how much of the players the JSON shows
	MaxList int         // bytes of the players list before it is cut short; 0: DefaultMaxList
}

// Handler answers SAGL requests from replies encoded once per snapshot. It
// is safe for concurrent use.
type Handler struct {
	cfg    Config
	issuer *challenge.Issuer
	mu     sync.Mutex // serializes Publish
	enc    atomic.Pointer[encoded]
}

// encoded is everything served for one snapshot and logo; never changed.
type encoded struct {
	version uint64 // the snapshot's
	json    []byte
	serial  uint32
	parts   [][]byte
	logo    *Logo
	pieces  [][]byte // logo replies at offsets 0, LogoPiece, 2*LogoPiece, ...
}

// NewHandler makes a SAGL handler whose challenges come from issuer.
func NewHandler(cfg Config, issuer *challenge.Issuer) *Handler {
	if cfg.MaxList <= 0 {
		cfg.MaxList = DefaultMaxList
	}
	return &Handler{cfg: cfg, issuer: issuer}
}

// Name is the protocol's label in metrics and logs.
func (h *Handler) Name() string { return Name }

// Claims reports whether p is a SAGL request ("SAGQ").
func (h *Handler) Claims(p []byte) bool { return Claims(p) }

// Update encodes the replies for snap, keeping the logo last published.
func (h *Handler) Update(snap *state.Snapshot) {
	var logo *Logo
	if e := h.enc.Load(); e != nil {
		logo = e.logo
	}
	h.Publish(snap, logo)
}

// Publish encodes the replies for snap with logo (nil: no logo). The serial
// changes whenever the JSON does: it is a hash of the JSON, moved on if it
// happens to equal the previous serial of a different JSON.
func (h *Handler) Publish(snap *state.Snapshot, logo *Logo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	js := EncodeJSON(h.cfg.Players, h.cfg.MaxList, snap, logo)
	prev := h.enc.Load()
	e := &encoded{version: snap.Version, json: js, logo: logo}
	switch {
	case prev != nil && bytes.Equal(prev.json, js):
		e.json, e.serial, e.parts = prev.json, prev.serial, prev.parts
	default:
		e.serial = serialOf(js)
		if prev != nil && e.serial == prev.serial {
			e.serial++
		}
		e.parts = EncodeParts(js, e.serial)
	}
	if prev != nil && prev.logo == logo {
		e.pieces = prev.pieces
	} else {
		e.pieces = encodeLogoPieces(logo)
	}
	h.enc.Store(e)
}

func serialOf(js []byte) uint32 {
	f := fnv.New32a()
	f.Write(js)
	return f.Sum32()
}

// JSON returns the current JSON (nil before the first Update) and its
// serial. The bytes must not be changed.
func (h *Handler) JSON() ([]byte, uint32) {
	e := h.enc.Load()
	if e == nil {
		return nil, 0
	}
	return e.json, e.serial
}

// Logo returns the logo being served, or nil.
func (h *Handler) Logo() *Logo {
	if e := h.enc.Load(); e != nil {
		return e.logo
	}
	return nil
}

// ValidToken reports whether req carries src's valid challenge token
// (dgram.TokenChecker): the proven-source tier answers such a request even
// while it sheds the unproven ones.
func (h *Handler) ValidToken(req []byte, src netip.AddrPort) bool {
	r, err := ParseRequest(req)
	return err == nil && r.Token != 0 && h.issuer.Valid(src.Addr(), r.Token)
}

var _ dgram.TokenChecker = (*Handler)(nil)

// Answer answers one request by appending reply datagrams to out: the
// 12-byte challenge to a request without a valid token (smaller than the
// 64-byte request), every info part, or one logo piece. Broken requests and
// logo offsets past the end are Malformed and get nothing.
func (h *Handler) Answer(req []byte, src netip.AddrPort, scratch []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	e := h.enc.Load()
	if e == nil {
		return out, dgram.Ignored
	}
	r, err := ParseRequest(req)
	if err != nil {
		return out, dgram.Malformed
	}
	ip := src.Addr()
	if r.Token == 0 || !h.issuer.Valid(ip, r.Token) {
		return append(out, PutChallenge(scratch, h.issuer.Token(ip))), dgram.Challenged
	}
	if r.Kind == KindInfo {
		return append(out, e.parts...), dgram.Answered
	}
	p, ok := e.piece(r.Offset, scratch)
	if !ok {
		return out, dgram.Malformed
	}
	return append(out, p), dgram.Answered
}

// piece returns the logo reply for offset: pre-encoded when aligned, else
// written into scratch. Offsets past the end are refused.
func (e *encoded) piece(off uint32, scratch []byte) ([]byte, bool) {
	size := 0
	if e.logo != nil {
		size = len(e.logo.Data)
	}
	if (size == 0 && off != 0) || (size > 0 && int64(off) >= int64(size)) {
		return nil, false
	}
	if off%LogoPiece == 0 {
		return e.pieces[off/LogoPiece], true
	}
	return AppendLogoPiece(scratch[:0], e.logo, off), true
}

// parseToken reads the token of a challenge reply.
func parseToken(p []byte) (uint32, bool) {
	if len(p) != ChallengeSize || [4]byte(p[:4]) != replyMagic || p[4] != Version || p[5] != KindChallenge {
		return 0, false
	}
	return binary.LittleEndian.Uint32(p[8:]), true
}

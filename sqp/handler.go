package sqp

import (
	"encoding/binary"
	"net/netip"
	"sync/atomic"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/state"
)

// Config is the SQP responder's configuration.
type Config struct {
	GameType string // ServerInfo game type when the state has no gamemode
	GamePort uint16 // ServerInfo port when the state has no game_port
}

// Handler answers SQP requests. Update encodes the chunks once per snapshot
// and plans the reply to each of the 31 combinations; Answer copies the
// requested one, behind headers carrying the client's token, into scratch.
type Handler struct {
	cfg    Config
	issuer *challenge.Issuer
	enc    atomic.Pointer[encoded]
}

// NewHandler makes an SQP handler drawing tokens from issuer.
func NewHandler(cfg Config, issuer *challenge.Issuer) *Handler {
	return &Handler{cfg: cfg, issuer: issuer}
}

// Name is the protocol's label in metrics and logs.
func (h *Handler) Name() string { return Name }

// Claims reports whether p is an SQP request (see Claims).
func (h *Handler) Claims(p []byte) bool { return Claims(p) }

// Update encodes the replies for a new snapshot.
func (h *Handler) Update(snap *state.Snapshot) { h.enc.Store(encode(h.cfg, snap)) }

// Listed returns how many rules and players the current reply to chunks
// lists (fewer than the snapshot has when they do not fit one reply).
func (h *Handler) Listed(chunks byte) (rules, players int) {
	if enc := h.enc.Load(); enc != nil {
		p := &enc.plans[chunks&AllChunks]
		return p.rules, p.players
	}
	return 0, 0
}

// ValidToken reports whether req carries src's valid challenge token
// (dgram.TokenChecker): the proven-source tier answers such a request even
// while it sheds the unproven ones.
func (h *Handler) ValidToken(req []byte, src netip.AddrPort) bool {
	r, err := ParseRequest(req)
	return err == nil && r.Type != TypeChallenge && h.issuer.Valid(src.Addr(), r.Token)
}

var _ dgram.TokenChecker = (*Handler)(nil)

// Answer answers one request by appending its reply datagrams, written into
// scratch (at least MaxReply bytes), to out. A challenge request gets the
// token (Challenged, 5 bytes for 5); a query with a valid token its chunks
// in one to MaxPackets datagrams (Answered); a query with a wrong or
// expired token nothing (Ignored); a query for unknown chunks is Malformed.
func (h *Handler) Answer(req []byte, src netip.AddrPort, scratch []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	enc := h.enc.Load()
	if enc == nil {
		return out, dgram.Ignored
	}
	r, err := ParseRequest(req)
	if err != nil {
		return out, dgram.Malformed
	}
	ip := src.Addr()
	if r.Type == TypeChallenge {
		b := scratch[:ChallengeLen]
		b[0] = TypeChallenge
		binary.BigEndian.PutUint32(b[1:], h.issuer.Token(ip))
		return append(out, b), dgram.Challenged
	}
	if !h.issuer.Valid(ip, r.Token) {
		return out, dgram.Ignored
	}
	p := &enc.plans[r.Chunks]
	if p.packets*HeaderLen+p.size > len(scratch) {
		return out, dgram.Ignored // cannot happen with a scratch of MaxReply bytes
	}
	return p.write(r.Token, scratch, out), dgram.Answered
}

package a2s

import (
	"encoding/binary"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/state"
)

// DefaultAppID is the app id A2S_INFO reports unless configured: 480, Valve's
// public Steamworks test app ("Spacewar"). Its low byte (224) is 200 or more,
// which qstat needs to read split replies in the Source layout.
const DefaultAppID = 480

// DefaultProtocol is the A2S_INFO protocol byte unless configured (Source's 17).
const DefaultProtocol = 17

// Config is the A2S responder's configuration.
type Config struct {
	AppID          uint16 // A2S_INFO app id (see DefaultAppID)
	GameID         uint64 // EDF GameID; 0 leaves the field out
	Protocol       byte   // A2S_INFO protocol byte
	InfoChallenge  bool   // A2S_INFO needs a challenge (as current Source servers)
	Compat         bool   // answer the steamlogger client's "SOURCE\0" and 'A' retry
	LegacyRequests bool   // answer A2A_PING and GETCHALLENGE even when the reply is larger than the request
	GamePort       uint16 // EDF game port when the state sets none
}

// Handler answers A2S requests from pre-encoded replies. Update encodes them
// once per snapshot; Answer only picks and copies a token.
type Handler struct {
	cfg     Config
	issuer  *challenge.Issuer
	now     func() time.Time
	enc     atomic.Pointer[encoded]
	players atomic.Pointer[playerReply]
}

type encoded struct {
	snap   *state.Snapshot
	listed int
	info   [][]byte
	rules  [][]byte
}

// playerReply is the PLAYER reply for one snapshot as of one second: the
// durations in it move with the clock, so it is re-encoded at most once a
// second, never per query.
type playerReply struct {
	version uint64
	second  int64
	dgrams  [][]byte
}

var pingReply = []byte{0xFF, 0xFF, 0xFF, 0xFF, ReplyPing, 0x00}

// NewHandler makes an A2S handler. now is the clock (time.Now when nil).
func NewHandler(cfg Config, issuer *challenge.Issuer, now func() time.Time) *Handler {
	if now == nil {
		now = time.Now
	}
	return &Handler{cfg: cfg, issuer: issuer, now: now}
}

// Name is the protocol's label in metrics and logs.
func (h *Handler) Name() string { return Name }

// Claims reports whether p is an A2S request.
func (h *Handler) Claims(p []byte) bool { return Claims(p) }

// Update encodes the replies for a new snapshot.
func (h *Handler) Update(snap *state.Snapshot) {
	listed := Listed(snap)
	id := uint32(snap.Version) << 2
	h.enc.Store(&encoded{
		snap:   snap,
		listed: listed,
		info:   [][]byte{EncodeInfo(h.cfg, snap, listed)},
		rules:  Split(EncodeRules(snap), id|2),
	})
}

// ValidToken reports whether req carries src's valid challenge token
// (dgram.TokenChecker): the proven-source tier answers such a request even
// while it sheds the unproven ones.
func (h *Handler) ValidToken(req []byte, src netip.AddrPort) bool {
	r, err := ParseRequest(req, h.cfg.Compat)
	return err == nil && r.HasToken && r.Challenge != NoChallenge && h.issuer.Valid(src.Addr(), r.Challenge)
}

var _ dgram.TokenChecker = (*Handler)(nil)

// Answer answers one request: it appends the reply datagrams to out. Datagrams
// may point into scratch (at least 64 bytes) or into shared, immutable
// pre-encoded replies.
func (h *Handler) Answer(req []byte, src netip.AddrPort, scratch []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	enc := h.enc.Load()
	if enc == nil {
		return out, dgram.Ignored
	}
	r, err := ParseRequest(req, h.cfg.Compat)
	if err != nil {
		return out, dgram.Malformed
	}
	ip := src.Addr()
	valid := r.HasToken && r.Challenge != NoChallenge && h.issuer.Valid(ip, r.Challenge)
	switch r.Type {
	case TypeInfo, TypeChallenge:
		if valid {
			return append(out, enc.info...), dgram.Answered
		}
		if h.cfg.InfoChallenge || r.Type == TypeChallenge {
			return append(out, h.challenge(ip, scratch)), dgram.Challenged
		}
		return append(out, enc.info...), dgram.AnsweredOpen
	case TypePlayer, TypeRules:
		if !valid {
			return append(out, h.challenge(ip, scratch)), dgram.Challenged
		}
		if r.Type == TypeRules {
			return append(out, enc.rules...), dgram.Answered
		}
		return append(out, h.playerReply(enc).dgrams...), dgram.Answered
	case TypeGetChallenge:
		if len(req) < 9 && !h.cfg.LegacyRequests {
			return out, dgram.Ignored
		}
		return append(out, h.challenge(ip, scratch)), dgram.Challenged
	case TypePing:
		if len(req) < len(pingReply) && !h.cfg.LegacyRequests {
			return out, dgram.Ignored
		}
		return append(out, pingReply), dgram.AnsweredOpen
	}
	return out, dgram.Malformed
}

func (h *Handler) challenge(ip netip.Addr, scratch []byte) []byte {
	b := scratch[:9]
	copy(b, header)
	b[4] = TypeChallenge
	binary.LittleEndian.PutUint32(b[5:], h.issuer.Token(ip))
	return b
}

func (h *Handler) playerReply(enc *encoded) *playerReply {
	now := h.now()
	sec := now.Unix()
	if pr := h.players.Load(); pr != nil && pr.version == enc.snap.Version && pr.second == sec {
		return pr
	}
	id := uint32(enc.snap.Version)<<2 ^ uint32(sec)<<16 | 1
	pr := &playerReply{
		version: enc.snap.Version,
		second:  sec,
		dgrams:  Split(EncodePlayers(enc.snap, enc.listed, now), id),
	}
	h.players.Store(pr)
	return pr
}

package gamespy4

import (
	"net/netip"
	"strconv"
	"sync/atomic"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/state"
)

// Defaults of Config.
const (
	DefaultGameType = "SMP"       // vanilla's gametype; strict clients (minequery) require it
	DefaultGameID   = "MINECRAFT" // vanilla's game_id; strict clients (minequery) require it
	// DefaultMaxPacket is the default size limit of a reply datagram: 1,024
	// bytes, the most minequery reads.
	DefaultMaxPacket = 1024
	// MinPacket and MaxPacket bound Config.MaxPacket. Replies are written
	// into the responder's scratch buffer, which must hold MaxPacket bytes.
	MinPacket = 1024
	MaxPacket = 8192
)

// Config is the GameSpy4 responder's configuration.
type Config struct {
	GameType  string // gametype (basic and full stat)
	GameID    string // game_id (full stat)
	Plugins   string // plugins (full stat); vanilla sends ""
	HostPort  uint16 // hostport when the state sets no game_port
	HostIP    string // hostip
	MaxPacket int    // size limit of a reply datagram, MinPacket to MaxPacket; 0: DefaultMaxPacket
}

func (c Config) maxPacket() int {
	if c.MaxPacket == 0 {
		return DefaultMaxPacket
	}
	return min(max(c.MaxPacket, MinPacket), MaxPacket)
}

// Handler answers GameSpy4 requests from replies encoded once per snapshot.
// Answer copies one of them, behind the client's session id, into scratch.
type Handler struct {
	cfg    Config
	issuer *challenge.Issuer
	enc    atomic.Pointer[encoded]
}

type encoded struct {
	basic  []byte // basic stat after the header
	full   []byte // full stat after the header
	listed int    // players the full stat lists
}

// NewHandler makes a GameSpy4 handler drawing tokens from issuer.
func NewHandler(cfg Config, issuer *challenge.Issuer) *Handler {
	return &Handler{cfg: cfg, issuer: issuer}
}

// Name is the protocol's label in metrics and logs.
func (h *Handler) Name() string { return Name }

// Claims reports whether p is a GameSpy4 request (starts with FE FD).
func (h *Handler) Claims(p []byte) bool { return Claims(p) }

// Update encodes the replies for a new snapshot.
func (h *Handler) Update(snap *state.Snapshot) {
	full, listed := EncodeFull(h.cfg, snap)
	h.enc.Store(&encoded{basic: EncodeBasic(h.cfg, snap), full: full, listed: listed})
}

// Listed returns how many players the current full stat lists (fewer than
// the snapshot has when they do not all fit one datagram).
func (h *Handler) Listed() int {
	if enc := h.enc.Load(); enc != nil {
		return enc.listed
	}
	return 0
}

// ValidToken reports whether req carries src's valid challenge token
// (dgram.TokenChecker): the proven-source tier answers such a request even
// while it sheds the unproven ones.
func (h *Handler) ValidToken(req []byte, src netip.AddrPort) bool {
	r, err := ParseRequest(req)
	return err == nil && r.Type != TypeHandshake && h.Valid(src.Addr(), r.Token)
}

var _ dgram.TokenChecker = (*Handler)(nil)

// Answer answers one request by appending its reply datagram, written into
// scratch (at least MaxPacket bytes), to out. A handshake gets the token
// (Challenged); a stat with a valid token the basic or full stat (Answered);
// a stat with a wrong or expired token nothing (Ignored).
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
	if r.Type == TypeHandshake {
		return append(out, h.handshake(r.Session, ip, scratch)), dgram.Challenged
	}
	if !h.Valid(ip, r.Token) {
		return out, dgram.Ignored
	}
	body := enc.basic
	if r.Full {
		body = enc.full
	}
	if HeaderLen+len(body) > len(scratch) {
		return out, dgram.Ignored // cannot happen with a scratch of MaxPacket bytes
	}
	b := scratch[:HeaderLen+len(body)]
	b[0] = TypeStat
	copy(b[1:HeaderLen], r.Session[:])
	copy(b[HeaderLen:], body)
	return append(out, b), dgram.Answered
}

// handshake writes 09 <session> <token as ASCII decimal> 00 into scratch.
func (h *Handler) handshake(session [4]byte, ip netip.Addr, scratch []byte) []byte {
	b := append(scratch[:0], TypeHandshake)
	b = append(b, session[:]...)
	b = strconv.AppendUint(b, uint64(WireToken(h.issuer.Token(ip))), 10)
	return append(b, 0)
}

// Valid reports whether tok is ip's current or previous wire token.
func (h *Handler) Valid(ip netip.Addr, tok uint32) bool {
	return h.issuer.ValidAs(ip, tok, WireToken)
}

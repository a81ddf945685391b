package quake3

import (
	"net/netip"
	"sync/atomic"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/state"
)

// Per-IP packet rate ioquake3 applies to connectionless queries
// (SVC_RateLimitAddress): a burst of 10, then one per second.
const (
	DefaultPacketRate  = 1.0
	DefaultPacketBurst = 10
)

// Handler answers getinfo and getstatus from replies encoded once per
// snapshot. Answer copies a reply into scratch only to add a challenge.
type Handler struct {
	cfg              Config
	dgram.PacketRate // the per-source request rate the responder enforces before Answer (Quake 3 has no challenge against spoofed sources)
	enc              atomic.Pointer[encoded]
}

type encoded struct {
	info   []byte // infoResponse without a challenge
	status []byte // statusResponse without a challenge
}

// NewHandler makes a Quake 3 handler. ratePerSec and burst are the per-IP
// packet rate the responder applies before Answer (see PacketLimit), as
// [quake3] packet_rate and packet_burst write it: DefaultPacketRate is the
// default, dgram.NoPacketLimit turns it off; a burst of zero or less takes
// DefaultPacketBurst.
func NewHandler(cfg Config, ratePerSec float64, burst int) *Handler {
	return &Handler{cfg: cfg, PacketRate: dgram.ConfiguredPacketRate(ratePerSec, burst, DefaultPacketBurst)}
}

// Name is the protocol's label in metrics and logs.
func (h *Handler) Name() string { return Name }

// Claims reports whether p is a getinfo or getstatus request.
func (h *Handler) Claims(p []byte) bool { return Claims(p) }

// Update encodes the replies for a new snapshot.
func (h *Handler) Update(snap *state.Snapshot) {
	h.enc.Store(&encoded{info: EncodeInfo(h.cfg, snap), status: EncodeStatus(h.cfg, snap)})
}

// Answer answers one request by appending one datagram to out: the
// pre-encoded reply itself, or (with a challenge) the reply assembled in
// scratch. Quake 3 proves nothing about the source: replies are AnsweredOpen.
func (h *Handler) Answer(req []byte, src netip.AddrPort, scratch []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	enc := h.enc.Load()
	if enc == nil {
		return out, dgram.Ignored
	}
	r, err := ParseRequest(req)
	if err != nil {
		return out, dgram.Malformed
	}
	reply := enc.info
	if r.Type == TypeStatus {
		reply = enc.status
	}
	if r.Challenge == nil {
		return append(out, reply), dgram.AnsweredOpen
	}
	if len(reply)+len(challengeKey)+len(r.Challenge) > len(scratch) {
		return out, dgram.Ignored // scratch smaller than MaxReply: cannot happen with the responder's
	}
	b := scratch[:0]
	if r.Type == TypeStatus {
		b = append(b, statusHeader...)
		b = append(b, challengeKey...)
		b = append(b, r.Challenge...)
		b = append(b, reply[len(statusHeader):]...)
	} else {
		b = append(b, reply...)
		b = append(b, challengeKey...)
		b = append(b, r.Challenge...)
	}
	return append(out, b), dgram.AnsweredOpen
}

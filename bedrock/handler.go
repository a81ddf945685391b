package bedrock

import (
	"net/netip"
	"sync/atomic"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/state"
)

// Per-source ping rate the responder applies before Answer: a burst of 10,
// then 2 a second. The game's server list pings each server about once a
// second while it is open; 2 leaves room for two players behind one NAT.
const (
	DefaultPacketRate  = 2.0
	DefaultPacketBurst = 10
)

// Handler answers unconnected pings with a pong encoded once per
// snapshot. Answer copies it into scratch and writes the ping's time into
// the copy.
type Handler struct {
	cfg              Config
	dgram.PacketRate // the per-source request rate the responder enforces before Answer (RakNet's ping has no challenge against spoofed sources)
	pong             atomic.Pointer[[]byte]
}

// NewHandler makes a Bedrock handler. ratePerSec and burst are the per-source
// packet rate the responder applies before Answer (see PacketLimit), as
// [bedrock] packet_rate and packet_burst write it: DefaultPacketRate is the
// default, dgram.NoPacketLimit turns it off; a burst of zero or less takes
// DefaultPacketBurst.
func NewHandler(cfg Config, ratePerSec float64, burst int) *Handler {
	return &Handler{cfg: cfg, PacketRate: dgram.ConfiguredPacketRate(ratePerSec, burst, DefaultPacketBurst)}
}

// Name is the protocol's label in metrics and logs.
func (h *Handler) Name() string { return Name }

// Claims reports whether p has the shape of an unconnected ping.
func (h *Handler) Claims(p []byte) bool { return Claims(p) }

// Update encodes the pong for a new snapshot.
func (h *Handler) Update(snap *state.Snapshot) {
	p := EncodePong(h.cfg, snap)
	h.pong.Store(&p)
}

// Pong returns the current pong with a zero time (nil before the first
// Update).
func (h *Handler) Pong() []byte {
	if p := h.pong.Load(); p != nil {
		return *p
	}
	return nil
}

// Answer answers a ping with one pong, written into scratch with the ping's
// time. The ping proves nothing about its source and the pong is larger:
// the reply is AnsweredOpen and draws on the global unproven budget.
func (h *Handler) Answer(req []byte, src netip.AddrPort, scratch []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	p := h.pong.Load()
	if p == nil {
		return out, dgram.Ignored
	}
	if _, err := ParsePing(req); err != nil {
		return out, dgram.Malformed
	}
	pong := *p
	if len(pong) > len(scratch) {
		return out, dgram.Ignored // scratch smaller than MaxPong: cannot happen with the responder's
	}
	b := scratch[:len(pong)]
	copy(b, pong)
	copy(b[pongTime:pongTime+8], req[pingTime:pingTime+8])
	return append(out, b), dgram.AnsweredOpen
}

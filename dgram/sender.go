package dgram

import "net/netip"

// Sender sends datagrams out of one of the responder's sockets: the relay
// sends the game server's answers back to a client through it, from the
// address the client wrote to.
type Sender interface {
	// SendFrom sends b to dst, from local when it is valid (the address a
	// client's datagrams arrived on), else from the address the kernel picks.
	SendFrom(b []byte, local netip.Addr, dst netip.AddrPort) error
}

// PacketLimited is implemented by a handler whose protocol cannot prove a
// source's address (Quake 3): the responder then limits how many of its
// requests one source (IPv4 address or IPv6 /64) may send, before Answer and
// on top of the byte budgets. A rate of NoPacketLimit (zero) or less means
// no limit.
type PacketLimited interface {
	PacketLimit() (ratePerSec float64, burst int)
}

// ScratchSize is the size of the scratch buffer the responder hands a
// handler's Answer for the reply datagrams it writes (32 KiB: an SQP reply
// of 255 players and a few hundred rules, whose every datagram carries the
// client's token, is written there whole).
const ScratchSize = 32 << 10

// NoPacketLimit is the rate that means no per-source limit, wherever a
// packet rate is written: packet_rate = 0 in the config ([quake3],
// [bedrock]), ConfiguredPacketRate's rate, and PacketLimit's result.
const NoPacketLimit = 0.0

// PacketRate is a handler's per-source request rate, embedded by handlers
// whose protocol has no challenge (it implements PacketLimited).
type PacketRate struct {
	rate  float64
	burst int
}

// ConfiguredPacketRate is the rate of a packet_rate / packet_burst pair as
// the config writes it: rate requests a second (NoPacketLimit: none) after
// a burst of burst (defBurst for zero or less).
func ConfiguredPacketRate(rate float64, burst, defBurst int) PacketRate {
	if burst <= 0 {
		burst = defBurst
	}
	return PacketRate{rate: rate, burst: burst}
}

// PacketLimit returns the rate and burst the responder enforces before
// Answer; a rate of NoPacketLimit means none.
func (r PacketRate) PacketLimit() (ratePerSec float64, burst int) {
	if r.rate <= NoPacketLimit {
		return NoPacketLimit, 0
	}
	return r.rate, r.burst
}

var _ PacketLimited = PacketRate{}

// TokenChecker is implemented by a handler that can tell, without
// answering, whether a request carries a valid challenge token for its
// source: while the proven-source tier sheds unproven requests (the
// responder's unproven packet gate is spent), such a request is still
// answered. ValidToken must not build a reply; it may hash the token.
type TokenChecker interface {
	ValidToken(req []byte, src netip.AddrPort) bool
}

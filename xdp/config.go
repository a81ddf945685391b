package xdp

import (
	"errors"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/responder"
)

// ErrUnsupported is New's error where the fast path cannot exist (not Linux).
var ErrUnsupported = errors.New("the XDP fast path needs Linux")

// Config configures the fast path.
type Config struct {
	Interfaces []string         // attach to these (at least one)
	Mode       Mode             // ModeNative (default) or ModeGeneric
	Listen     []netip.AddrPort // [listen] udp: the addresses it answers for
	Issuer     *challenge.Issuer
	Limits     responder.Limits
	Deny       *responder.Deny // [limits] deny, the socket path's list (nil: none)
	// LastFed and StaleAfter: the feed's last message (zero: never) and
	// [feed] stale_after (0: never stale), as feed.Server.Stale reads them.
	LastFed    func() time.Time
	StaleAfter time.Duration
	Logger     *slog.Logger
	Registry   prometheus.Registerer

	unbound bool // tests: attach the unbound program, as on a kernel before 6.8
}

// sum16 is the ones' complement sum of b as big-endian 16-bit words (a
// last odd byte is the high half of a word), folded to 16 bits: the
// checksum of a reply's payload, which the program adds to the headers'.
func sum16(b []byte) uint32 {
	var s uint64
	for i := 0; i+1 < len(b); i += 2 {
		s += uint64(b[i])<<8 | uint64(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint64(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint32(s)
}

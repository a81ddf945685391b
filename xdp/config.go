package xdp

import (
	"errors"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
)

// Attach modes (config.XDPMode's values).
const (
	ModeNative  = "native"  // in the driver; falls back to generic with a warning
	ModeGeneric = "generic" // after the kernel made an skb: any driver, slower
)

// ErrUnsupported is New's error where the fast path cannot exist (not Linux).
var ErrUnsupported = errors.New("the XDP fast path needs Linux")

// Config configures the fast path.
type Config struct {
	Interfaces []string         // attach to these (at least one)
	Mode       string           // ModeNative (default) or ModeGeneric
	Listen     []netip.AddrPort // [listen] udp: the addresses it answers for
	Issuer     *challenge.Issuer
	Limits     responder.Limits
	// SilentFrom is when the program must fall silent, from the daemon's
	// one silence value (feed stale, or [upstream] stale or not yet
	// answered): a time not after now while queryd is silent, the time it
	// will be while it answers, the zero Time (or a nil func) while nothing
	// can silence it. It is read every sync (50 ms).
	SilentFrom func() time.Time
	Logger     *slog.Logger
	Registry   prometheus.Registerer
}

// The program's protocol rows (enum proto in bpf/queryd.c).
const (
	protoA2S = iota
	protoGS4
	protoQ3
)

// protocolLabel names the program's protocol rows in metrics: the
// protocols' names.
var protocolLabel = [...]string{protoA2S: "a2s", protoGS4: "gamespy4", protoQ3: "quake3"}

// outcomeLabel names the program's outcome columns (responder's labels;
// answered without a token counts as "answered", as in the responder).
var outcomeLabel = [...]string{"answered", "answered", "challenged", "rate_limited", "stale"}

// slotOf maps a module's fast query to the program's reply slot
// (enum slot in bpf/queryd.c).
var slotOf = map[module.FastQuery]int{
	module.FastA2SInfo:   0,
	module.FastA2SPlayer: 1,
	module.FastA2SRules:  2,
	module.FastGS4Basic:  3,
	module.FastGS4Full:   4,
	module.FastQ3Info:    5,
	module.FastQ3Status:  6,
}

// numSlots is the program's NSLOTS.
const numSlots = 7

// maxReply is the program's MAX_REPLY: the largest reply it sends.
const maxReply = 1472

// replyOpen is the program's REPLY_OPEN slot flag.
const replyOpen = 1

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

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

// Config configures the fast path: the host's part (one program on each
// interface, one challenge issuer) and the servers it answers for.
type Config struct {
	Interfaces []string // attach to these (at least one)
	Mode       Mode     // ModeNative (default) or ModeGeneric
	Issuer     *challenge.Issuer
	Logger     *slog.Logger
	Registry   prometheus.Registerer // the host's series (queryd_xdp_attached)
	// Servers are the game servers the program answers for, at most
	// config.MaxServers (its tables are sized to it); SetServers replaces
	// them.
	Servers []Server
	// Host is the program's share of the host-wide per-IP budget ([host]:
	// the daemon hands it half, as it does each server's [limits]), which
	// every answer the program sends draws on, whichever server's, on top
	// of that server's own per-IP budget; SetHostLimits replaces it. The
	// zero HostLimits: none. Its TrackedIPs sizes the program's table at
	// load (the default: the servers' tracked sources together).
	Host responder.HostLimits

	unbound bool   // tests: attach the unbound program, as on a kernel before 6.8
	object  []byte // tests: load this object (built from bpf/queryd.c) instead of the embedded one
	clsact  bool   // tests: attach divert's egress program as a tc filter, as on a kernel before 6.6
}

// Server is one game server's share of the program: its destinations and
// rules. Its replies come from SetProtocols, its budgets and deny list
// from here or SetLimits and SetDeny.
type Server struct {
	Name   string           // unique among the servers
	Listen []netip.AddrPort // [listen] udp, as bound: the addresses it answers for (wildcards allowed)
	Limits responder.Limits // its share of [limits] (the daemon halves it while the program runs)
	Deny   *responder.Deny  // [limits] deny, the socket path's list (nil: none)
	// SilentFrom is when the program must fall silent for this server, from
	// the daemon's one silence value (feed stale, or [upstream] stale or not
	// yet answered): a time not after now while it is silent, the time it
	// will be while it answers, the zero Time (or a nil func) while nothing
	// can silence it. It is read every sync (50 ms).
	SilentFrom func() time.Time
	// Registry takes the server's series (queryd_xdp_requests_total,
	// queryd_xdp_passed_total, …); the daemon wraps it with its server
	// label. Nil: none.
	Registry prometheus.Registerer
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

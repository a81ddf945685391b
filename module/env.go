package module

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/state"
)

// Env is what a module may use besides its config section: narrow inputs,
// never the daemon itself.
type Env struct {
	// Issuer makes and checks the address-bound challenge tokens every
	// protocol shares.
	Issuer *challenge.Issuer
	// Now is the coarse clock the responder sets once per receive batch;
	// handlers read it instead of time.Now.
	Now func() time.Time
	// Log is the module's logger (already carrying its name).
	Log *slog.Logger
	// Registry registers the module's own metrics.
	Registry prometheus.Registerer
	// Listen is [listen] udp: the addresses queryd answers on.
	Listen []netip.AddrPort
	// Base is [server]: the config's base state document (the operator's,
	// where the feed's changes are not).
	Base map[string]any
	// RelayGameServer is the game server relay mode forwards to, resolved at
	// start (the zero AddrPort when relay mode is off): a service that must
	// know whether the game server is up (Quake 3's heartbeats while queryd
	// does not answer Quake 3 itself) asks it from a socket of its own.
	RelayGameServer netip.AddrPort
	// Silent reports whether queryd is silent (answers nothing): a source
	// is stale (the feed has gone quiet for [feed] stale_after, or with
	// [upstream] the game server has not answered for as long, or not yet
	// at all).
	Silent func(now time.Time) bool
	// Subscribe calls fn with the current state snapshot and with every new
	// one, in order, until cancel; fn runs under the store's lock and must
	// be quick.
	Subscribe func(fn func(*state.Snapshot)) (cancel func())
	// SendTo sends a datagram from queryd's public UDP socket (so that a
	// master's answer comes back to it).
	SendTo func(b []byte, dst netip.AddrPort) error
}

// GamePort is the port of the first [listen] udp address, the game port a
// protocol reports when neither the state nor its config sets one.
func (e Env) GamePort() uint16 {
	if len(e.Listen) == 0 {
		return 0
	}
	return e.Listen[0].Port()
}

package config

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/queryd/queryd/relay"
)

// Relay is [relay]: own the public game port and forward what no responder
// claims. Each key means what the relay.Config field of the same name means
// (relay/doc.go, "Config").
type Relay struct {
	GameServer  string   `toml:"upstream"`     // the game server, "HOST:PORT"; "" turns relay mode off
	IdleTimeout Duration `toml:"idle_timeout"` // a client session ends after this long without a packet either way; 0: 2m
	// Queue is no longer used (datagrams go straight to the session's
	// socket, whose send buffer is the queue); accepted with a warning.
	Queue       int `toml:"queue"`
	MaxSessions int `toml:"max_sessions"` // client sessions at once; 0: 4096
	// MaxSessionsPerIP is how many sessions one IPv4 address or IPv6 /64
	// may hold.
	MaxSessionsPerIP int     `toml:"max_sessions_per_ip"`
	OpenRate         float64 `toml:"open_rate"`  // sessions one IPv4 address / IPv6 /64 may open per second; 0 turns the limit off
	OpenBurst        int     `toml:"open_burst"` // sessions one source may open at once before open_rate applies
	// ShareIPv4x24, ShareIPv6x56 and ShareIPv6x48 are the parts of
	// max_sessions one IPv4 /24, IPv6 /56 and IPv6 /48 may hold; 0 turns
	// that cap off.
	ShareIPv4x24 float64 `toml:"share_ipv4_24"`
	ShareIPv6x56 float64 `toml:"share_ipv6_56"`
	ShareIPv6x48 float64 `toml:"share_ipv6_48"`
	// ProvenReserve is the part of max_sessions only proven sessions may take.
	ProvenReserve float64  `toml:"proven_reserve"`
	ProveAfter    Duration `toml:"prove_after"`   // two-way game traffic this long proves a session
	LoadingGrace  Duration `toml:"loading_grace"` // a playing session quiet less than this is never evicted for a newcomer
}

func defaultRelay() Relay {
	return Relay{
		MaxSessionsPerIP: relay.DefaultMaxPerIP, OpenRate: relay.DefaultOpenRate, OpenBurst: relay.DefaultOpenBurst,
		ShareIPv4x24: relay.DefaultShare24, ShareIPv6x56: relay.DefaultShare56, ShareIPv6x48: relay.DefaultShare48,
		ProvenReserve: relay.DefaultReserve, ProveAfter: Duration(relay.DefaultProveAfter),
		LoadingGrace: Duration(relay.DefaultLoadingGrace),
	}
}

// RelayConfig is the relay.Config these keys make for upstream (resolved
// by RelayGameServer); the daemon adds its logger and registry.
func (r Relay) RelayConfig(upstream netip.AddrPort) relay.Config {
	return relay.Config{
		GameServer:   upstream,
		IdleTimeout:  r.Idle(),
		MaxSessions:  r.Sessions(),
		MaxPerIP:     r.MaxSessionsPerIP,
		OpenRate:     r.OpenRate,
		OpenBurst:    r.OpenBurst,
		Share24:      r.ShareIPv4x24,
		Share56:      r.ShareIPv6x56,
		Share48:      r.ShareIPv6x48,
		Reserve:      r.ProvenReserve,
		ProveAfter:   time.Duration(r.ProveAfter),
		LoadingGrace: time.Duration(r.LoadingGrace),
	}
}

// Idle returns idle_timeout, or relay.DefaultIdle when unset.
func (r Relay) Idle() time.Duration {
	if r.IdleTimeout == 0 {
		return relay.DefaultIdle
	}
	return time.Duration(r.IdleTimeout)
}

// Sessions returns max_sessions, or relay.DefaultMaxSessions when unset.
func (r Relay) Sessions() int {
	if r.MaxSessions == 0 {
		return relay.DefaultMaxSessions
	}
	return r.MaxSessions
}

func (c *Config) validateRelay(errs *Errors) {
	r := c.Relay
	if r.GameServer != "" {
		if err := CheckHostPort(r.GameServer); err != nil {
			errs.Add("relay.upstream", "%v", err)
		} else if ap, err := netip.ParseAddrPort(r.GameServer); err == nil {
			if err := c.relayLoop(ap, localAddrs); err != nil {
				errs.Add("relay.upstream", "%v", err)
			}
		} // a name: resolved and checked by RelayGameServer (queryd check and start)
	}
	if d := r.Idle(); d < time.Second || d > time.Hour {
		errs.Add("relay.idle_timeout", "want 1s to 1h (default 2m), got %s", d)
	}
	if n := r.Sessions(); n < 1 || n > 65536 {
		errs.Add("relay.max_sessions", "want 1 to 65536 (default 4096), got %d", n)
	}
	if n := r.MaxSessionsPerIP; n < 1 || n > 65536 {
		errs.Add("relay.max_sessions_per_ip", "want 1 to 65536 (default %d), got %d", relay.DefaultMaxPerIP, n)
	}
	if r.OpenRate < 0 || r.OpenRate > 1e6 {
		errs.Add("relay.open_rate", "want 0 (no limit) to 1000000 sessions per second (default %v), got %v", relay.DefaultOpenRate, r.OpenRate)
	}
	if n := r.OpenBurst; n < 1 || n > 65536 {
		errs.Add("relay.open_burst", "want 1 to 65536 (default %d), got %d", relay.DefaultOpenBurst, n)
	}
	for _, sh := range []struct {
		key  string
		v, d float64
	}{{"relay.share_ipv4_24", r.ShareIPv4x24, relay.DefaultShare24}, {"relay.share_ipv6_56", r.ShareIPv6x56, relay.DefaultShare56},
		{"relay.share_ipv6_48", r.ShareIPv6x48, relay.DefaultShare48}} {
		if !(sh.v >= 0 && sh.v <= 1) {
			errs.Add(sh.key, "want 0 (no cap) to 1, a part of max_sessions (default %v), got %v", sh.d, sh.v)
		}
	}
	if v := r.ProvenReserve; !(v >= 0 && v <= 0.9) {
		errs.Add("relay.proven_reserve", "want 0 to 0.9, a part of max_sessions (default %v), got %v", relay.DefaultReserve, v)
	}
	if d := time.Duration(r.ProveAfter); d < 0 || d > time.Minute {
		errs.Add("relay.prove_after", "want 0s to 1m (default %s), got %s", relay.DefaultProveAfter, d)
	}
	if d := time.Duration(r.LoadingGrace); d < 0 || d > time.Hour {
		errs.Add("relay.loading_grace", "want 0s to 1h (default %s), got %s", relay.DefaultLoadingGrace, d)
	}
}

// relayWarnings are the [relay] keys that work but may not do what was meant.
func (c *Config) relayWarnings() []string {
	var w []string
	if c.Relay.Queue != 0 {
		w = append(w, "relay.queue: no longer used (datagrams go straight to each session's socket; a full socket buffer drops them); remove the key")
	}
	return w
}

// localAddrs returns the addresses of this host's interfaces (a variable
// for tests).
var localAddrs = func() []netip.Addr {
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	out := make([]netip.Addr, 0, len(ifs))
	for _, a := range ifs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap().WithZone(""))
		}
	}
	return out
}

// relayLoop returns an error when datagrams sent to up would reach one of
// queryd's own [listen] udp sockets: every relayed datagram would come back
// as a new client and be relayed again. up loops when it equals a listen
// address, or when a wildcard listen address (0.0.0.0:P for IPv4, [::]:P
// for IPv6: queryd's IPv6 sockets are IPv6-only) has its port and up is a
// loopback address or one of the host's (local returns them; asked only
// then). The unspecified address (0.0.0.0, ::) means this host too.
func (c *Config) relayLoop(up netip.AddrPort, local func() []netip.Addr) error {
	ua := up.Addr().Unmap().WithZone("")
	if ua.IsUnspecified() {
		return fmt.Errorf("%s is not an address to send to (it means this host); want the game server's address", up)
	}
	var locals []netip.Addr
	asked := false
	for _, l := range c.Listen.UDP {
		s := l.String()
		if l.Port() != up.Port() {
			continue
		}
		la := l.Addr().Unmap().WithZone("")
		if la == ua {
			return fmt.Errorf("%s is queryd's own [listen] udp address %q: relayed datagrams would come back to queryd, "+
				"each as a new client, and loop; point it at the game server (on another port or host)", up, s)
		}
		if !la.IsUnspecified() || la.Is4() != ua.Is4() {
			continue
		}
		if !asked {
			locals, asked = local(), true
		}
		if ua.IsLoopback() || slices.Contains(locals, ua) {
			return fmt.Errorf("%s is an address of this host, where queryd listens on every address at port %d ([listen] udp %q): "+
				"relayed datagrams would come back to queryd, each as a new client, and loop; point it at the game server "+
				"(on another port or host)", up, up.Port(), s)
		}
	}
	return nil
}

// RelayGameServer resolves [relay] upstream (an IP, or a name looked up now,
// preferring an IPv4 address as the relay then uses it) and refuses an
// upstream that any of its addresses makes a loop back to queryd. A loop is
// an *Error with the key relay.upstream; a failed lookup a plain error.
func (c *Config) RelayGameServer(ctx context.Context) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(c.Relay.GameServer)
	if err != nil {
		return netip.AddrPort{}, &Error{Key: "relay.upstream", Reason: err.Error()}
	}
	pn, err := net.LookupPort("udp", port)
	if err != nil {
		return netip.AddrPort{}, &Error{Key: "relay.upstream", Reason: err.Error()}
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("[relay] upstream %s: %w", c.Relay.GameServer, err)
	}
	if len(addrs) == 0 {
		return netip.AddrPort{}, fmt.Errorf("[relay] upstream %s: no address", c.Relay.GameServer)
	}
	pick := addrs[0].Unmap()
	for _, a := range addrs {
		if a.Unmap().Is4() {
			pick = a.Unmap()
			break
		}
	}
	for _, a := range addrs {
		a = a.Unmap()
		if err := c.relayLoop(netip.AddrPortFrom(a, uint16(pn)), localAddrs); err != nil {
			if ip, perr := netip.ParseAddr(host); perr != nil || ip.Unmap() != a {
				err = fmt.Errorf("%s resolves to %s: %w", host, a, err)
			}
			return netip.AddrPort{}, &Error{Key: "relay.upstream", Reason: err.Error()}
		}
	}
	return netip.AddrPortFrom(pick, uint16(pn)), nil
}

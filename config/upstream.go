package config

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/upstream"
)

// Upstream is [upstream]: take the state from the game server queryd
// fronts, by asking it in its own protocol (package upstream).
type Upstream struct {
	Protocol UpstreamProtocol `toml:"protocol"` // a module that can poll ("a2s"); "" turns it off
	Address  string           `toml:"address"`  // the game server, "HOST:PORT"; "": [relay] upstream
	Interval Duration         `toml:"interval"` // between polls
	Timeout  Duration         `toml:"timeout"`  // per request
}

// UpstreamProtocol is [upstream] protocol: the name of a module with the
// polling capability (module.Poller). Which names exist is the
// registration list's business (protocols.List), not config's: Parse
// checks the name against the modules it is given.
type UpstreamProtocol string

// UpstreamOff is [upstream] protocol unset: no polling.
const UpstreamOff UpstreamProtocol = ""

// pollers returns the names of the modules that can poll a stock server.
func pollers(mods []Module) []string {
	var names []string
	for _, m := range mods {
		if _, ok := m.(module.Poller); ok {
			names = append(names, m.Name())
		}
	}
	return names
}

// checkUpstreamProtocol refuses an [upstream] protocol no module polls in,
// naming the ones that do.
func (c *Config) checkUpstreamProtocol(mods []Module, errs *Errors) {
	p := string(c.Upstream.Protocol)
	names := pollers(mods)
	if p == "" || slices.Contains(names, p) {
		return
	}
	want := "no module can poll: [upstream] cannot be used"
	if len(names) > 0 {
		want = fmt.Sprintf("want one of %q", names)
	}
	why := "no module is named so"
	if c.Section(p) != nil {
		why = "that module cannot poll a game server"
	}
	errs.Add("upstream.protocol", "%q: %s; %s", p, why, want)
}

// Defaults and bounds of [upstream]; the defaults are the poller's.
const (
	DefaultUpstreamInterval = upstream.DefaultInterval
	DefaultUpstreamTimeout  = upstream.DefaultTimeout
	minUpstreamInterval     = 100 * time.Millisecond
	maxUpstreamInterval     = time.Hour
	minUpstreamTimeout      = 10 * time.Millisecond
	maxUpstreamTimeout      = 30 * time.Second
)

func defaultUpstream() Upstream {
	return Upstream{Interval: Duration(DefaultUpstreamInterval), Timeout: Duration(DefaultUpstreamTimeout)}
}

// On reports whether queryd takes the state from the game server.
func (u Upstream) On() bool { return u.Protocol != UpstreamOff }

// UpstreamAddress is the game server [upstream] polls: its address, else
// [relay] upstream ("" when neither is set).
func (c *Config) UpstreamAddress() string {
	if c.Upstream.Address != "" {
		return c.Upstream.Address
	}
	return c.Relay.GameServer
}

func (c *Config) validateUpstream(errs *Errors) {
	u := c.Upstream
	inBounds := true
	if iv := time.Duration(u.Interval); iv < minUpstreamInterval || iv > maxUpstreamInterval {
		errs.Add("upstream.interval", "want %s to %s (default %s), got %s", minUpstreamInterval, maxUpstreamInterval, DefaultUpstreamInterval, iv)
		inBounds = false
	}
	if to := time.Duration(u.Timeout); to < minUpstreamTimeout || to > maxUpstreamTimeout {
		errs.Add("upstream.timeout", "want %s to %s (default %s), got %s", minUpstreamTimeout, maxUpstreamTimeout, DefaultUpstreamTimeout, to)
		inBounds = false
	}
	if !u.On() {
		return
	}
	switch addr := c.UpstreamAddress(); {
	case addr == "":
		errs.Add("upstream.address", "required: the game server's \"HOST:PORT\" (with relay mode on, it defaults to [relay] upstream)")
	case u.Address == "": // [relay] upstream, checked there
	default:
		if err := CheckHostPort(addr); err != nil {
			errs.Add("upstream.address", "%v", err)
		} else if ap, err := netip.ParseAddrPort(addr); err == nil {
			if err := c.upstreamLoop(ap); err != nil {
				errs.Add("upstream.address", "%v", err)
			}
		} // a name: resolved and checked by UpstreamAddr (queryd check and start)
	}
	stale := time.Duration(c.Feed.StaleAfter)
	if gap := time.Duration(u.Interval) + time.Duration(u.Timeout); inBounds && stale > 0 && stale <= gap {
		errs.Add("upstream.interval", "interval (%s) plus timeout (%s) must be under [feed] stale_after (%s): "+
			"queryd would go silent between two polls of a game server that answers", time.Duration(u.Interval), time.Duration(u.Timeout), stale)
	}
}

// upstreamWarnings are the [upstream] keys that work but may not do what was meant.
func (c *Config) upstreamWarnings() []string {
	u := c.Upstream
	var w []string
	if !u.On() && u.Address != "" {
		w = append(w, "upstream.address: set, but [upstream] protocol is not: queryd asks the game server nothing")
	}
	if u.On() && time.Duration(u.Interval) < time.Second {
		w = append(w, fmt.Sprintf("upstream.interval: %s polls the game server more than once a second (default %s)", time.Duration(u.Interval), DefaultUpstreamInterval))
	}
	if u.On() && c.Feed.StaleAfter == 0 {
		w = append(w, "feed.stale_after: 0s: queryd keeps serving the game server's last answer when it stops answering (and [server] before its first)")
	}
	return w
}

// upstreamLoop refuses a game server address that is one of queryd's own
// UDP sockets (it would poll its own answers, and never go stale).
func (c *Config) upstreamLoop(ap netip.AddrPort) error {
	if err := c.relayLoop(ap, localAddrs); err != nil {
		return fmt.Errorf("%s is queryd itself (a [listen] udp socket answers there): queryd would poll its own answers; point it at the game server", ap)
	}
	return nil
}

// UpstreamAddr resolves the game server [upstream] polls (an IP, or a name
// looked up now, preferring an IPv4 address) and refuses one that is queryd
// itself. A loop is an *Error with the key upstream.address; a failed
// lookup a plain error.
func (c *Config) UpstreamAddr(ctx context.Context) (netip.AddrPort, error) {
	key := "upstream.address"
	if c.Upstream.Address == "" {
		key = "relay.upstream"
	}
	addr := c.UpstreamAddress()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.AddrPort{}, &Error{Key: key, Reason: err.Error()}
	}
	pn, err := net.LookupPort("udp", port)
	if err != nil {
		return netip.AddrPort{}, &Error{Key: key, Reason: err.Error()}
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("[upstream] %s: %w", addr, err)
	}
	if len(addrs) == 0 {
		return netip.AddrPort{}, fmt.Errorf("[upstream] %s: no address", addr)
	}
	pick := addrs[0].Unmap()
	for _, a := range addrs {
		if a.Unmap().Is4() {
			pick = a.Unmap()
			break
		}
	}
	ap := netip.AddrPortFrom(pick, uint16(pn))
	if err := c.upstreamLoop(ap); err != nil {
		return netip.AddrPort{}, &Error{Key: key, Reason: err.Error()}
	}
	return ap, nil
}

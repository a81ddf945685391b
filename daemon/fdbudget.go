package daemon

import (
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/responder"
)

// Descriptors an outsider can make queryd hold (relay sessions, the
// modules' connections (an HTTP service's), feed connections, admin
// connections) are capped so that, together, they stay well below
// RLIMIT_NOFILE: the rest is kept for what queryd needs to keep working
// (listeners, UDP sockets, a reconnecting feeder, logo files, heartbeats).
// Go raises the soft limit to the hard limit at start (os package, Linux),
// so the limit read here is the most the process can have.

// fdReserve is how many descriptors no cap may hand out: listeners, UDP
// sockets, the feed, files and whatever the runtime needs.
const fdReserve = 128

// fdShare is the part of the limit (above the reserve) the caps may take
// together: "well below" the limit.
const fdShare = 0.75

// adminMaxConns caps the connections to [admin] listen (Prometheus scrapes,
// health checks, status pages); more wait in the kernel's backlog, and
// past adminMaxConns-1 a new one closes the one idle longest.
const adminMaxConns = 64

// fdCap is one cap on descriptors, by its config key.
type fdCap struct {
	Key string
	N   int
}

// fdCaps are the descriptor caps of the parts outsiders can fill: the
// large ones (relay sessions, the modules' connections), which fitCaps
// lowers, and the small fixed ones (feed, admin), which it keeps.
type fdCaps struct {
	Large []fdCap
	Fixed int
}

func (c fdCaps) total() int {
	n := c.Fixed
	for _, l := range c.Large {
		n += l.N
	}
	return n
}

// fitCaps shrinks the large caps in proportion so that all caps together
// take at most fdShare of limit minus fdReserve and minus the sockets
// queryd opens itself (each large cap keeps at least 1). It returns the
// caps and, when it shrank any, why. whole turns a limit that would keep
// the caps into the process's (the same but in host mode, where limit is
// one server's share).
func fitCaps(limit, sockets int, want fdCaps, about string, whole func(int) int) (fdCaps, string) {
	budget := int(float64(limit-fdReserve-sockets) * fdShare)
	if want.total() <= budget || len(want.Large) == 0 { // the fixed caps are kept
		return want, ""
	}
	room := max(budget-want.Fixed, 2)
	large := want.total() - want.Fixed
	got := fdCaps{Fixed: want.Fixed}
	var changes []string
	for _, l := range want.Large {
		n := max(1, l.N*room/large)
		got.Large = append(got.Large, fdCap{Key: l.Key, N: n})
		changes = append(changes, fmt.Sprintf("%s %d -> %d", l.Key, l.N, n))
	}
	need := whole(fdReserve + sockets + int(math.Ceil(float64(want.total())/fdShare)))
	return got, fitReason(limit, sockets, budget, need, want.Fixed, about, strings.Join(changes, ", "))
}

// fitReason says why fitCaps lowered the caps, in numbers that add up:
// what the limit leaves for connections and sessions (when anything), the
// caps as lowered, and the limit that would keep them all (need).
func fitReason(limit, sockets, budget, need, fixed int, about, changes string) string {
	raise := fmt.Sprintf("raise the limit to %d or more (LimitNOFILE= in systemd, ulimit -n) to keep the configured caps", need)
	if budget <= fixed {
		return fmt.Sprintf("%s: too low for the caps: %d descriptors kept for queryd itself and %d for its UDP sockets leave "+
			"no room beside the %d of the feed and admin connections; caps lowered to a minimum: %s; %s",
			about, min(fdReserve, limit), sockets, fixed, changes, raise)
	}
	return fmt.Sprintf("%s: caps lowered to fit %d descriptors for connections and sessions (%.0f%% of what is left after %d kept "+
		"for queryd itself and %d for its UDP sockets; the feed and admin connections keep their %d): %s; %s",
		about, budget, fdShare*100, fdReserve, sockets, fixed, changes, raise)
}

// FitDescriptors lowers cfg's relay and module connection caps to the
// descriptor budget (fitCaps) and returns why when it did. Start and reload
// apply it to every config, so a reload compares like with like.
func FitDescriptors(cfg *config.Config) (string, error) { return fitShare(cfg, 1) }

// FitHostDescriptors is FitDescriptors for each server of h, each held to
// an equal share of the budget (the limit less the reserve, split between
// the servers), so that together they stay below the process's limit. It
// returns each lowering's reason, naming the server.
func FitHostDescriptors(h *config.Host) ([]string, error) {
	var whys []string
	for _, s := range h.Servers {
		why, err := fitShare(s.Config, len(h.Servers))
		if err != nil {
			return whys, err
		}
		if why != "" {
			whys = append(whys, "server "+s.Name+": "+why)
		}
	}
	return whys, nil
}

// fitShare fits cfg to one of n equal shares of the descriptor budget.
func fitShare(cfg *config.Config, n int) (string, error) {
	limit, err := descriptorLimit()
	if err != nil {
		return "", err
	}
	admin := cfg.Admin.Listen.IsValid()
	about := fmt.Sprintf("RLIMIT_NOFILE is %d", limit)
	whole := func(share int) int { return share }
	if n > 1 { // the host's one admin listener first, then equal shares
		host := 0
		if admin {
			host = adminMaxConns
		}
		limit = shareOf(limit, host, n)
		about = fmt.Sprintf("%s, this server's share of it (one of %d servers) %d", about, n, limit)
		whole = func(share int) int { return wholeFor(share, host, n) }
		admin = false
	}
	want := fdCaps{Fixed: cfg.Feed.MaxConns}
	if admin {
		want.Fixed += adminMaxConns
	}
	if cfg.Feed.HTTP.IsValid() {
		want.Fixed += cfg.Feed.HTTPMaxConns
	}
	if cfg.Relay.GameServer != "" {
		want.Large = append(want.Large, fdCap{Key: "relay.max_sessions", N: cfg.Relay.Sessions()})
	}
	users := map[string]config.DescriptorUser{}
	for _, s := range cfg.Modules {
		if u, ok := s.Section.(config.DescriptorUser); ok {
			if key, n := u.Descriptors(); n > 0 {
				users[key] = u
				want.Large = append(want.Large, fdCap{Key: key, N: n})
			}
		}
	}
	workers := cfg.Listen.Workers
	if workers == 0 {
		workers = runtime.NumCPU()
	}
	if cfg.Listen.SteerProven && cfg.Listen.Socket != responder.SocketPortable {
		workers *= 2 // the proven sources' sockets (daemon/steer.go)
	}
	got, why := fitCaps(limit, len(cfg.Listen.UDP)*workers, want, about, whole)
	for _, l := range got.Large {
		if l.Key == "relay.max_sessions" {
			cfg.Relay.MaxSessions = l.N
		} else {
			users[l.Key].LimitDescriptors(l.N)
		}
	}
	return why, nil
}

// shareOf is one of n servers' share of the descriptor limit, after the
// host's own (host: its admin connections).
func shareOf(limit, host, n int) int { return fdReserve + (limit-host-fdReserve)/n }

// wholeFor is the limit that gives each of n servers share (shareOf's
// inverse).
func wholeFor(share, host, n int) int { return host + fdReserve + (share-fdReserve)*n }

package main

import (
	"fmt"
	"runtime"
	"syscall"

	"github.com/queryd/queryd/config"
)

// Descriptors an outsider can make queryd hold (relay sessions, SAGL HTTP
// connections, feed connections, admin connections) are capped so that,
// together, they stay well below RLIMIT_NOFILE: the rest is kept for what
// queryd needs to keep working (listeners, UDP sockets, a reconnecting
// feeder, logo files, heartbeats). Go raises the soft limit to the hard
// limit at start (os package, Linux), so the limit read here is the most
// the process can have.

// fdReserve is how many descriptors no cap may hand out: listeners, UDP
// sockets, the feed, files and whatever the runtime needs.
const fdReserve = 128

// fdShare is the part of the limit (above the reserve) the caps may take
// together: "well below" the limit.
const fdShare = 0.75

// fdCaps are the descriptor caps of the parts outsiders can fill.
type fdCaps struct {
	Relay int // [relay] max_sessions (0: relay off)
	HTTP  int // [sagl] http_max_conns (0: SAGL HTTP off)
	Feed  int // [feed] max_conns
	Admin int // connections to [admin] listen (0: off)
}

func (c fdCaps) total() int { return c.Relay + c.HTTP + c.Feed + c.Admin }

// descriptorLimit returns the process's RLIMIT_NOFILE soft limit.
func descriptorLimit() (int, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("RLIMIT_NOFILE: %w", err)
	}
	if lim.Cur > 1<<30 {
		return 1 << 30, nil
	}
	return int(lim.Cur), nil
}

// fitCaps shrinks the relay and HTTP caps (the large ones) in proportion so
// that all caps together take at most fdShare of limit minus fdReserve and
// minus the sockets queryd opens itself. The feed and admin caps are small
// and kept. It returns the caps and, when it shrank any, why.
func fitCaps(limit, sockets int, want fdCaps) (fdCaps, string) {
	budget := int(float64(limit-fdReserve-sockets) * fdShare)
	if want.total() <= budget {
		return want, ""
	}
	got := want
	room := budget - want.Feed - want.Admin
	large := want.Relay + want.HTTP
	if room < 2 {
		room = 2
	}
	if want.Relay > 0 {
		got.Relay = max(1, want.Relay*room/large)
	}
	if want.HTTP > 0 {
		got.HTTP = max(1, want.HTTP*room/large)
	}
	why := fmt.Sprintf("RLIMIT_NOFILE is %d: caps lowered to fit %d descriptors (%.0f%% of the limit less %d reserved and %d sockets): relay.max_sessions %d -> %d, sagl.http_max_conns %d -> %d; raise the limit (LimitNOFILE= in systemd, ulimit -n) to keep the configured caps",
		limit, budget, fdShare*100, fdReserve, sockets, want.Relay, got.Relay, want.HTTP, got.HTTP)
	return got, why
}

// adminMaxConns caps the connections to [admin] listen (Prometheus scrapes,
// health checks); more wait in the kernel's backlog.
const adminMaxConns = 32

// fitDescriptors lowers cfg's relay and SAGL HTTP caps to the descriptor
// budget (fitCaps) and returns why when it did. Start and reload apply it
// to every config, so a reload compares like with like.
func fitDescriptors(cfg *config.Config) (string, error) {
	limit, err := descriptorLimit()
	if err != nil {
		return "", err
	}
	want := fdCaps{Feed: cfg.Feed.MaxConns}
	if cfg.Relay.Upstream != "" {
		want.Relay = cfg.Relay.Sessions()
	}
	if cfg.SAGL.Enabled && cfg.SAGL.HTTP != "" {
		want.HTTP = cfg.SAGL.HTTPMaxConns
	}
	if cfg.Admin.Listen != "" {
		want.Admin = adminMaxConns
	}
	workers := cfg.Listen.Workers
	if workers == 0 {
		workers = runtime.NumCPU()
	}
	got, why := fitCaps(limit, len(cfg.Listen.UDP)*workers, want)
	if got.Relay > 0 {
		cfg.Relay.MaxSessions = got.Relay
	}
	if got.HTTP > 0 {
		cfg.SAGL.HTTPMaxConns = got.HTTP
	}
	return why, nil
}

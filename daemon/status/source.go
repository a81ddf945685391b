package status

import (
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/agones"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sleep"
	"github.com/queryd/queryd/state"
	"github.com/queryd/queryd/upstream"
)

// Silence is the daemon's silence value as the page reads it: what the
// server answers (State), whether it is silent (no protocol answers
// anything), why, since when, and when it falls silent by itself.
type Silence struct {
	// State is "answering" (the game's current state), "not_fed" (no
	// source has sent state yet: [server]), "asleep" ([sleep]: the game
	// server stopped on purpose; its last state, no players) or "silent".
	State string
	// Fed reports whether a source (a feeder, the game server) has sent
	// the game's state.
	Fed    bool
	Silent bool
	// Reasons are the causes that hold, the one that began first first:
	// "feed", "upstream" (the game server stopped answering),
	// "upstream_unanswered" (it has not answered since queryd started),
	// "agones_starting" (no GameServer read yet, or not ready yet),
	// "agones_stopped" (the GameServer is going or gone) or "agones" (the
	// SDK server gave nothing readable for stale_after); empty while
	// queryd answers.
	Reasons []string
	// Feed, Upstream and Agones say whether the feed, the game server
	// and the Agones GameServer are among the causes.
	Feed, Upstream, Agones bool
	// Since is when State began (while silent: when queryd fell silent).
	Since time.Time
	// Deadline is, while it answers, when it falls silent unless the feed
	// speaks or the game server answers first (zero: nothing can silence it).
	Deadline time.Time
}

// Source is what the status page reads from the daemon. Every func must be
// safe to call from any goroutine; the nil ones are left out of the page.
type Source struct {
	Snapshot   func() *state.Snapshot  // the current state
	Protocols  func() []string         // the live protocol handlers, in demux order
	Listen     func() []netip.AddrPort // the bound UDP addresses ([listen] udp)
	FeedConns  func() int              // feed connections open
	LastFed    func() time.Time        // the feed's last message (zero: none yet)
	StaleAfter time.Duration           // [feed] stale_after (0: never stale)
	// Silence is the daemon's one answer to "is queryd silent" at now
	// (nil: never silent).
	Silence func(now time.Time) Silence
	// Upstream is what the [upstream] poller knows of the game server;
	// nil without [upstream] (the card is left out).
	Upstream func() upstream.Status
	// Agones is what the [agones] watcher knows of the GameServer; nil
	// without [agones] (the card is left out).
	Agones func() agones.Status
	// Sleep is the [sleep] cycle's state; nil without [sleep] (the card is
	// left out).
	Sleep func() sleep.Status
	// Gatherer holds the counters the sampler reads once a second.
	Gatherer prometheus.Gatherer
	// Heartbeats names the master heartbeats' metrics (a module's, found
	// by the daemon); the zero value: no heartbeats card.
	Heartbeats module.HeartbeatMetrics
	// UnprovenUse is how much of the global unproven budget is drawn now
	// (0 to 1); nil: not shown.
	UnprovenUse func(now time.Time) float64
	// DrainSources hands over the busiest sources counted since its last
	// call (responder.Server.DrainSources); nil: none.
	DrainSources func(dst []responder.SourceCount) []responder.SourceCount
	// FastSources hands over the sources the XDP fast path answered or
	// dropped since its last call (xdp.FastPath.DrainSources), merged
	// into the same table; nil: no fast path.
	FastSources func(dst []responder.SourceCount) []responder.SourceCount
	Build       Build
	// Servers is how many servers the host runs, down ones included (nil:
	// one): with more, the page lists them.
	Servers func() int
}

// Build is what the page says about the binary; the daemon fills it by the
// rules of `queryd version` (daemon.ReadBuildInfo).
type Build struct {
	Version  string `json:"version"`  // queryd's version (as `queryd version` prints it)
	Go       string `json:"go"`       // the Go toolchain
	Module   string `json:"module"`   // the main module's version ("(devel)" for a local build)
	Revision string `json:"revision"` // the VCS revision, "" when not stamped
	Time     string `json:"time"`     // the revision's commit time, "" when not stamped
	Modified bool   `json:"modified"` // built from a tree with uncommitted changes
}

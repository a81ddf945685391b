package status

import (
	"net/netip"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
)

// Source is what the status page reads from the daemon. Every func must be
// safe to call from any goroutine; the nil ones are left out of the page.
type Source struct {
	Snapshot   func() *state.Snapshot  // the current state
	Protocols  func() []string         // the live protocol handlers, in demux order
	Listen     func() []netip.AddrPort // the bound UDP addresses ([listen] udp)
	FeedConns  func() int              // feed connections open
	LastFed    func() time.Time        // the feed's last message (zero: none yet)
	Stale      func(now time.Time) bool
	StaleAfter time.Duration // [feed] stale_after (0: never stale)
	// Gatherer holds the counters the sampler reads once a second.
	Gatherer prometheus.Gatherer
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
}

// Build is what the page says about the binary.
type Build struct {
	Version  string `json:"version"`  // queryd's version (as `queryd version` prints it)
	Go       string `json:"go"`       // the Go toolchain
	Module   string `json:"module"`   // the main module's version ("(devel)" for a local build)
	Revision string `json:"revision"` // the VCS revision, "" when not stamped
	Time     string `json:"time"`     // the revision's commit time, "" when not stamped
	Modified bool   `json:"modified"` // built from a tree with uncommitted changes
}

// ReadBuild returns the running binary's Build with version.
func ReadBuild(version string) Build {
	b := Build{Version: version, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

package daemon

import (
	"runtime/debug"
	"strings"
	"time"

	"github.com/queryd/queryd/daemon/status"
)

// newStatus makes the server's status page sampler (nil when the admin
// listener is off: the page is served there). It gathers only the
// server's collectors of the metrics it reads (trackedRegisterer), and
// the host's one status tick samples it with every other server.
func (s *Server) newStatus() *status.Sampler {
	if !s.host.adminOn() {
		return nil
	}
	src := status.Source{
		Snapshot:     s.store.Snapshot,
		Protocols:    s.Protocols,
		Listen:       s.udp.Addrs,
		FeedConns:    func() int { return s.feed.Stats().Open },
		LastFed:      s.feed.LastFed,
		StaleAfter:   time.Duration(s.cfg.Feed.StaleAfter),
		Silence:      func(now time.Time) status.Silence { return s.silence.at(now).page() },
		Gatherer:     s.reg.sampled,
		Heartbeats:   s.host.heartbeats,
		UnprovenUse:  s.udp.UnprovenUse,
		DrainSources: s.udp.DrainSources,
		Build:        s.host.build,
		Servers:      s.host.serverCount,
	}
	if s.upstream != nil {
		src.Upstream = s.upstream.Status
	}
	if s.agones != nil {
		src.Agones = s.agones.Status
	}
	if s.sleep != nil {
		src.Sleep = s.sleep.Status
	}
	if len(s.host.main.XDP.Interfaces) > 0 {
		src.FastSources = s.fastSources // the sources the program answered
	}
	return status.New(src, s.log.With("part", "status"))
}

// page is s as the status page reads it.
func (s Silence) page() status.Silence {
	p := status.Silence{State: string(s.State), Fed: s.Fed, Silent: s.Silent, Since: s.Since, Deadline: s.Deadline,
		Feed: s.Causes.Has(ReasonFeed), Upstream: s.Causes.Has(ReasonUpstream) || s.Causes.Has(ReasonUnanswered),
		Agones: s.Causes.Has(ReasonAgonesStarting) || s.Causes.Has(ReasonAgonesStopped) || s.Causes.Has(ReasonAgones)}
	for _, r := range s.Causes.List() {
		p.Reasons = append(p.Reasons, string(r))
	}
	return p
}

// readStatusBuild is the running binary's status.Build (see statusBuild).
func readStatusBuild(version, commit string) status.Build {
	bi, _ := debug.ReadBuildInfo()
	return statusBuild(version, commit, bi)
}

// statusBuild is the status page's Build by ReadBuildInfo's rules, so that
// the page shows the version and commit `queryd version` prints and
// queryd_build_info exports (-X main.commit included), with the module
// version and the commit time Go recorded.
func statusBuild(version, commit string, bi *debug.BuildInfo) status.Build {
	b := buildInfoFrom(version, commit, bi)
	rev, dirty := strings.CutSuffix(b.Commit, "-dirty")
	if rev == "unknown" {
		rev = ""
	}
	out := status.Build{Version: b.Version, Go: b.GoVersion, Revision: rev, Modified: dirty}
	if bi == nil {
		return out
	}
	out.Module = bi.Main.Version
	stamped, _ := strings.CutSuffix(vcsRevision(bi.Settings), "-dirty")
	for _, s := range bi.Settings {
		if s.Key == "vcs.time" && stamped == rev { // the time of this commit, not of another
			out.Time = s.Value
		}
	}
	return out
}

package daemon

import (
	"time"

	"github.com/queryd/queryd/daemon/status"
)

// newStatus makes the status page's sampler (nil when the admin listener
// is off: the page is served there).
func (d *Daemon) newStatus() *status.Sampler {
	if !d.cfg.Admin.Listen.IsValid() {
		return nil
	}
	src := status.Source{
		Snapshot:     d.store.Snapshot,
		Protocols:    d.Protocols,
		Listen:       d.udp.Addrs,
		FeedConns:    func() int { return d.feed.Stats().Open },
		LastFed:      d.feed.LastFed,
		StaleAfter:   time.Duration(d.cfg.Feed.StaleAfter),
		Silence:      func(now time.Time) status.Silence { return d.silence.at(now).page() },
		Gatherer:     d.reg,
		UnprovenUse:  d.udp.UnprovenUse,
		DrainSources: d.udp.DrainSources,
		Build:        status.ReadBuild(d.opts.Version),
	}
	if d.upstream != nil {
		src.Upstream = d.upstream.Status
	}
	return status.New(src, d.log.With("part", "status"))
}

// page is s as the status page reads it.
func (s Silence) page() status.Silence {
	p := status.Silence{Silent: s.Silent, Since: s.Since, Deadline: s.Deadline, Feed: s.Feed, Upstream: s.Upstream != ""}
	if !s.Silent {
		return p
	}
	p.Reasons = append(p.Reasons, string(s.Reason))
	if s.Feed && s.Reason != ReasonFeed {
		p.Reasons = append(p.Reasons, string(ReasonFeed))
	}
	if s.Upstream != "" && s.Upstream != s.Reason {
		p.Reasons = append(p.Reasons, string(s.Upstream))
	}
	return p
}

var _ part = (*status.Sampler)(nil)

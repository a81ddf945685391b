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
		Stale:        d.feed.Stale,
		StaleAfter:   time.Duration(d.cfg.Feed.StaleAfter),
		Gatherer:     d.reg,
		UnprovenUse:  d.udp.UnprovenUse,
		DrainSources: d.udp.DrainSources,
		Build:        status.ReadBuild(d.opts.Version),
	}
	if d.xdp != nil {
		src.FastSources = d.xdp.DrainSources // the sources the program answered
	}
	return status.New(src, d.log.With("part", "status"))
}

var _ part = (*status.Sampler)(nil)

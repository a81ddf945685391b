package daemon

import (
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/responder"
)

// newHostBudget makes the host-wide per-IP budget of main ([host], its
// zeros derived from main's [limits]: config.HostBudget), which every
// server's responder shares (responder.Config.Host).
//
// The XDP program draws on it too: while the fast path is attached, both
// paths get half of it (hostShare), as they do of [limits] (shareLimits),
// so that one address receives from the host, over both paths together,
// no more than [host] allows. The socket path's half is set with
// budget.SetLimits, the program's handed to xdp.New (Config.Host) and, on
// SIGHUP, to FastPath.SetHostLimits; each path keeps its own buckets.
func newHostBudget(main *config.Config) (*responder.HostBudget, error) {
	return responder.NewHostBudget(main.HostBudget())
}

// hostShare is each path's share of the host-wide budget l: all of it
// without the fast path, half with it (reloadMu held, or at start).
func (d *Daemon) hostShare(l responder.HostLimits) responder.HostLimits {
	if d.fast == nil {
		return l
	}
	return l.Share(2)
}

// setHostBudget applies a reloaded main file's host-wide budget (SIGHUP)
// to both paths: the sources' state is kept when it did not change.
func (d *Daemon) setHostBudget(main *config.Config) {
	l := main.HostBudget()
	share := d.hostShare(l)
	if share == d.budget.Limits() {
		return
	}
	if err := d.budget.SetLimits(share); err != nil {
		d.log.Error("SIGHUP: [host] rejected; keeping the running host-wide budget", "err", err)
		return
	}
	if d.fast != nil {
		if err := d.fast.SetHostLimits(share); err != nil {
			d.log.Error("SIGHUP: the XDP program kept its host-wide budget", "err", err)
		}
	}
	d.log.Info("SIGHUP: host-wide per-IP budget changed", "per_ip_rate", l.PerIPRate, "per_ip_burst", l.PerIPBurst, "xdp_share", d.fast != nil)
}

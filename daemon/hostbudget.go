package daemon

import (
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/responder"
)

// newHostBudget makes the host-wide per-IP budget of main ([host], its
// zeros derived from main's [limits]: config.HostBudget), which every
// server's responder shares (responder.Config.Host).
//
// The XDP program does not draw on it yet: while the fast path is
// attached, what it answers is held by each server's share of [limits]
// only. When the program holds the host-wide budget too, both paths get
// half of it, as they do of [limits] (shareLimits): the socket path's
// half set here with budget.SetLimits(l.Share(2)), the program's half
// handed to xdp.New and FastPath.SetHostLimits (its GCRA: CostQ16,
// Tolerance).
func newHostBudget(main *config.Config) (*responder.HostBudget, error) {
	return responder.NewHostBudget(main.HostBudget())
}

// setHostBudget applies a reloaded main file's host-wide budget (SIGHUP):
// the sources' state is kept when it did not change.
func (d *Daemon) setHostBudget(main *config.Config) {
	l := main.HostBudget()
	if l == d.budget.Limits() {
		return
	}
	if err := d.budget.SetLimits(l); err != nil {
		d.log.Error("SIGHUP: [host] rejected; keeping the running host-wide budget", "err", err)
		return
	}
	d.log.Info("SIGHUP: host-wide per-IP budget changed", "per_ip_rate", l.PerIPRate, "per_ip_burst", l.PerIPBurst)
}

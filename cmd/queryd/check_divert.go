package main

import (
	"fmt"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/xdp"
)

// checkDivertKernel says, for a config with [listen] divert, what this
// host's kernel (release, k; ok false when it cannot be read) makes of it:
// an error before xdp.KernelXDP (the XDP program does not load: the start
// would be refused), with what works there instead; a warning before
// xdp.KernelTCX (no tcx: the egress program is a tc filter, which a killed
// queryd leaves behind).
func checkDivertKernel(c *config.Config, release string, k xdp.Kernel, ok bool) (errs config.Errors, warnings []string) {
	if len(c.Listen.Divert) == 0 || !ok {
		return nil, nil
	}
	switch {
	case !k.AtLeast(xdp.KernelXDP):
		errs.Add("listen.divert", "this host runs Linux %v (%s): divert needs %v or later (the XDP program); "+
			"on this kernel front the game server in relay mode ([relay] upstream), which runs on any kernel "+
			"(the XDP fast path needs %v too: without it queryd serves on the socket path)", k, release, xdp.KernelXDP, xdp.KernelXDP)
	case !k.AtLeast(xdp.KernelTCX):
		warnings = append(warnings, fmt.Sprintf("listen.divert: this host runs Linux %v, without tcx (%v): divert's egress program "+
			"attaches as a tc filter on the [xdp] interfaces' clsact qdisc (tc filter show dev IF egress: pref 20804, "+
			"queryd_divert_tc); a queryd killed with SIGKILL leaves it until its next start", k, xdp.KernelTCX))
	}
	return errs, warnings
}

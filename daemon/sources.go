package daemon

import (
	"github.com/queryd/queryd/agones"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/sleep"
)

// sourceModules are the config tables of the state's sources that the
// daemon runs itself beside the feed and [upstream] (which package config
// holds): [agones], and [sleep] after it (whose check asks whether
// [agones] is on). They are not protocol modules (no handler, no place in
// the demux, nothing to query), so they are not in the registration list
// (package protocols), which names protocols only; the daemon owns them as it
// owns the poller of [upstream], and every parser of a config (the daemon's
// reload, queryd run and check, daemontest) takes them through
// ConfigModules, so that no caller can forget one.
var sourceModules = []config.Module{agones.ConfigModule{}, sleep.ConfigModule{}}

// ConfigModules returns the config modules of a daemon running the
// protocol modules mods: their sections, in order, then the sources'
// ([agones], [sleep]). Pass it to config.Parse, Load, LoadHost and Check.
func ConfigModules(mods []Module) []config.Module {
	out := make([]config.Module, 0, len(mods)+len(sourceModules))
	for _, m := range mods {
		out = append(out, m)
	}
	return append(out, sourceModules...)
}

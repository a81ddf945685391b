package gamespy4

import "github.com/queryd/queryd/state"

// For returns c with the state's "gamespy4" object over it: the gametype,
// game_id, plugins and hostip the state sets (a fronted stock server's
// own, or a feeder's) replace [gamespy4]'s.
func (c Config) For(snap *state.Snapshot) Config {
	g := snap.GameSpy4
	if g == nil {
		return c
	}
	for _, f := range [...]struct {
		dst *string
		src *string
	}{{&c.GameType, g.GameType}, {&c.GameID, g.GameID}, {&c.Plugins, g.Plugins}, {&c.HostIP, g.HostIP}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return c
}

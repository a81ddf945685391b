package a2s

import "github.com/queryd/queryd/state"

// For returns c with the state's "a2s" object over it: the app id,
// protocol byte and EDF game id the state sets (a fronted stock server's
// own, or a feeder's) replace [a2s] app_id, protocol and game_id.
func (c Config) For(snap *state.Snapshot) Config {
	a := snap.A2S
	if a == nil {
		return c
	}
	if a.AppID >= 0 {
		c.AppID = uint16(a.AppID)
	}
	if a.Protocol >= 0 {
		c.Protocol = byte(a.Protocol)
	}
	if a.HasGameID {
		c.GameID = a.GameID
	}
	return c
}

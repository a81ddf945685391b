package bedrock

import "github.com/queryd/queryd/state"

// For returns c with the state's "bedrock" object over it: the edition,
// protocol, server GUID, game mode number and IPv6 port the state sets (a
// fronted stock server's own, or a feeder's) replace [bedrock]'s and
// queryd's own GUID. IPv6Port is then the state's even when 0.
func (c Config) For(snap *state.Snapshot) Config {
	b := snap.Bedrock
	if b == nil {
		return c
	}
	if b.Edition != "" {
		c.Edition = b.Edition
	}
	if b.Protocol >= 0 {
		c.Protocol = b.Protocol
	}
	if b.ServerID != 0 {
		c.GUID = b.ServerID
	}
	if b.GameModeNumber >= 0 {
		c.GameModeNumber = b.GameModeNumber
	}
	if b.IPv6Port >= 0 {
		c.IPv6Port, c.ipv6Set = uint16(b.IPv6Port), true
	}
	return c
}

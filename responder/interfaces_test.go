package responder_test

import (
	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sagl"
)

// The protocol handlers the daemon hands the responder (the protocol
// packages do not import responder, so the checks live here). PacketLimited
// is found by a type assertion at run time: without this check a changed
// signature would turn Quake 3's packet rate off silently.
var (
	_ responder.Handler       = (*a2s.Handler)(nil)
	_ responder.Handler       = (*gamespy4.Handler)(nil)
	_ responder.Handler       = (*sagl.Handler)(nil)
	_ responder.Handler       = (*quake3.Handler)(nil)
	_ responder.PacketLimited = (*quake3.Handler)(nil)
)

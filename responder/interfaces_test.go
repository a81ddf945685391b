package responder_test

import (
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/responder"
)

// The responder finds PacketLimited by a type assertion at run time on the
// handler the daemon hands it (quake3.Protocol, which embeds the Handler):
// without this check a changed signature would turn Quake 3's packet rate
// off silently. (The protocol packages do not import responder, so the
// check lives here.)
var _ responder.PacketLimited = (*quake3.Protocol)(nil)

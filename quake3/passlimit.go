package quake3

import (
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/dgram"
)

// Defaults of what relay mode passes to an ioquake3 game server of the
// requests it answers from its one global bucket (a burst of 10, then 10 a
// second: SVC_RateLimit(&outboundLeakyBucket, 10, 100)), which queryd's
// [upstream] poll and the heartbeats' probe share. At most 5 a second in
// total after a burst of 5 keeps at least half of that bucket for them
// whatever clients send. Per source, 4 at once then one every 10 s: a
// player's client asks getchallenge every 3 s until answered (ioquake3's
// RETRANSMIT_TIMEOUT), 4 tries cover 9 s, and 50 sources at their own rate
// are needed to fill the total, so that a new player's getchallenge still
// gets through a flood from fewer.
const (
	DefaultPassRate        = 5.0
	DefaultPassBurst       = 5
	DefaultPassSourceRate  = 0.1
	DefaultPassSourceBurst = 4
)

// PassLimit is the relay's limit on the datagrams ioquake3 answers from
// its global bucket (GloballyLimited: getchallenge, and getinfo and
// getstatus when [quake3] is off and they go to the game server), from
// [quake3] pass_rate, pass_burst, pass_source_rate and pass_source_burst,
// whether [quake3] is on or off (the daemon's PassLimiter capability).
func (Module) PassLimit(sec config.Section) dgram.PassLimit {
	s := sec.(*Section)
	return dgram.PassLimit{
		Match:       GloballyLimited,
		Rate:        s.PassRate,
		Burst:       s.PassBurst,
		SourceRate:  s.PassSourceRate,
		SourceBurst: s.PassSourceBurst,
	}
}

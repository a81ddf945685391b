package quake3

import (
	"time"

	"github.com/queryd/queryd/state"
)

// HeartbeatInterval is how often a server heartbeats its masters when
// nothing changes (ioquake3 and ET: 5 minutes; dpmaster wants one every 5 to
// 15 minutes).
const HeartbeatInterval = 5 * time.Minute

// Heartbeat returns the datagram that announces a server to a master:
// FF FF FF FF "heartbeat <name>\n", where name is the master's protocol
// string ("DarkPlaces", "QuakeArena-1", "EnemyTerritory-1") or, for a
// flatline, e.g. "ETFlatline-1".
func Heartbeat(name string) []byte {
	b := make([]byte, 0, 4+len("heartbeat ")+len(name)+1)
	b = append(b, header...)
	b = append(b, "heartbeat "...)
	b = append(b, name...)
	return append(b, '\n')
}

// Fill is how full a server is; a change of Fill triggers a heartbeat
// (dpmaster: when a server becomes empty or full, or stops being so).
type Fill uint8

// The fill levels.
const (
	Empty Fill = iota
	Partial
	Full
)

// String names the fill level for logs.
func (f Fill) String() string {
	switch f {
	case Empty:
		return "empty"
	case Full:
		return "full"
	}
	return "partial"
}

// FillOf returns how full snap is, as the infoResponse shows it.
func FillOf(snap *state.Snapshot) Fill {
	switch n := len(snap.Players); {
	case n == 0:
		return Empty
	case n >= MaxClients(snap):
		return Full
	}
	return Partial
}

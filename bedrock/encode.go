package bedrock

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/queryd/queryd/state"
)

// Config is what the pong says besides the state.
type Config struct {
	Edition        string // first field: "MCPE" (or "MCEE", Education Edition)
	Protocol       int    // the Bedrock network protocol number
	GameMode       string // game mode when the state has no gamemode
	GameModeNumber int
	IPv4Port       uint16 // IPv4 port when the state has no game_port
	IPv6Port       uint16 // 0: the IPv4 port
	GUID           uint64 // the server GUID, in the header and as the status's server id

	ipv6Set bool // IPv6Port is the state's, even 0 (For)
}

// PongHeaderLen is the pong before its status string: the id, the echoed
// time, the server GUID, the magic and the string's u16 length.
const PongHeaderLen = 1 + 8 + 8 + 16 + 2

// Offsets in a pong.
const (
	pongTime  = 1
	pongGUID  = 9
	pongMagic = 17
	pongLen   = 33
)

// Byte caps of the status string's fields taken from the state. Longer
// values are cut at a UTF-8 boundary, so that a pong is at most MaxPong
// bytes.
const (
	CapMOTD     = 256 // motd: the state's name
	CapSubMOTD  = 128 // sub-motd: the state's map
	CapVersion  = 64  // version
	CapGameMode = 64  // game mode: the state's gamemode, else the config's
	CapEdition  = 16  // edition (config)
)

// MaxPong bounds a pong: the header, the capped strings, the numbers at
// their widest (protocol 7 digits, players 4, max 5, the GUID 20 (a
// state's server_id may be any 64-bit number; queryd's own have 19), the
// game mode number 3, two ports 5 each) and the 12 semicolons.
const MaxPong = PongHeaderLen + CapEdition + CapMOTD + CapSubMOTD + CapVersion + CapGameMode + 7 + 4 + 5 + 20 + 3 + 5 + 5 + 12

// Replacement is what a ';' in a field becomes: the status string separates
// its fields with ';', so one inside a field would shift every later field.
const Replacement = ':'

// GUID bounds: every server GUID queryd makes has 19 decimal digits and
// is positive as a signed i64, so that clients reading it signed
// (minecraft-server-util) or unsigned agree, and the pong's size does not
// depend on it.
const (
	MinGUID = 1_000_000_000_000_000_000
	MaxGUID = 1<<63 - 1
)

// GUIDFrom maps x (random bits) into [MinGUID, MaxGUID].
func GUIDFrom(x uint64) uint64 { return MinGUID + x%(MaxGUID-MinGUID+1) }

// clean replaces ';' with Replacement and cuts s to at most max bytes at a
// UTF-8 boundary.
func clean(s string, max int) string {
	if strings.IndexByte(s, ';') >= 0 {
		s = strings.ReplaceAll(s, ";", string(rune(Replacement)))
	}
	if len(s) > max {
		s = s[:max]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// StatusString returns the pong's status string for the snapshot:
//
//	edition;motd;protocol;version;players;max;server GUID;sub-motd;game mode;game mode number;IPv4 port;IPv6 port;
func StatusString(cfg Config, snap *state.Snapshot) string {
	return string(appendStatus(nil, cfg, snap))
}

func appendStatus(b []byte, cfg Config, snap *state.Snapshot) []byte {
	cfg = cfg.For(snap)
	mode := snap.Gamemode
	if mode == "" {
		mode = cfg.GameMode
	}
	v4 := snap.GamePort
	if v4 == 0 {
		v4 = cfg.IPv4Port
	}
	v6 := cfg.IPv6Port
	if v6 == 0 && !cfg.ipv6Set {
		v6 = v4
	}
	field := func(s string) { b = append(append(b, s...), ';') }
	number := func(n int64) { b = append(strconv.AppendInt(b, n, 10), ';') }
	field(clean(cfg.Edition, CapEdition))
	field(clean(snap.Name, CapMOTD))
	number(int64(cfg.Protocol))
	field(clean(snap.GameVersion, CapVersion))
	number(int64(len(snap.Players)))
	number(int64(snap.MaxPlayers))
	b = append(strconv.AppendUint(b, cfg.GUID, 10), ';')
	field(clean(snap.Map, CapSubMOTD))
	field(clean(mode, CapGameMode))
	number(int64(cfg.GameModeNumber))
	number(int64(v4))
	number(int64(v6))
	return b
}

// EncodePong returns the pong for the snapshot with a zero time: the
// handler copies it and writes each ping's time into the copy. The state's
// "bedrock" object overrides cfg's edition, protocol, GUID, game mode
// number and IPv6 port (Config.For).
func EncodePong(cfg Config, snap *state.Snapshot) []byte {
	b := make([]byte, PongHeaderLen, MaxPong)
	b[0] = IDPong
	binary.BigEndian.PutUint64(b[pongGUID:], cfg.For(snap).GUID)
	copy(b[pongMagic:], Magic[:])
	b = appendStatus(b, cfg, snap)
	binary.BigEndian.PutUint16(b[pongLen:], uint16(len(b)-PongHeaderLen))
	return b
}

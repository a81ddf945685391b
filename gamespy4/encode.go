package gamespy4

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/queryd/queryd/state"
)

// HeaderLen is the size of a reply's header: the type byte and the session id.
const HeaderLen = 5

// Byte caps of the reply strings. Longer values are cut at a UTF-8
// boundary, so that the key/value section of a full stat always fits the
// smallest packet size (MinPacket) with room to spare.
const (
	CapHostname = 256 // motd / hostname (the state's name)
	CapMap      = 128 // map
	CapVersion  = 64  // version
	CapGameType = 32  // gametype and game_id (config)
	CapPlugins  = 256 // plugins (config)
	CapHostIP   = 64  // hostip (config or listen address)
)

// Keys of the full stat's key/value section, in vanilla's order.
var vanillaKeys = [...]string{
	"hostname", "gametype", "game_id", "version", "plugins",
	"map", "numplayers", "maxplayers", "hostport", "hostip",
}

var (
	// splitnumHeader opens the full stat (after the header): "splitnum\0",
	// 0x80 (the last and only packet, number 0) and a 0 byte.
	splitnumHeader = []byte("splitnum\x00\x80\x00")
	// playerHeader opens the player section, after the key/value section's
	// closing 0 byte.
	playerHeader = []byte("\x01player_\x00\x00")
)

// clean makes s safe for a NUL-terminated field: NUL bytes are removed and
// the result is cut to at most max bytes at a UTF-8 boundary.
func clean(s string, max int) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	if len(s) > max {
		s = s[:max]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

func appendString(b []byte, s string) []byte {
	b = append(b, s...)
	return append(b, 0)
}

// advertised is what both stat replies say, cleaned and capped.
type advertised struct {
	motd, gameType, gameID, version, plugins, mapName string
	numPlayers, maxPlayers                            string
	hostPort                                          uint16
	hostIP                                            string
}

// advertise is what the replies say for snap; the state's "gamespy4"
// object overrides cfg's gametype, game_id, plugins and hostip
// (Config.For).
func advertise(cfg Config, snap *state.Snapshot) advertised {
	cfg = cfg.For(snap)
	port := snap.GamePort
	if port == 0 {
		port = cfg.HostPort
	}
	return advertised{
		motd:       clean(snap.Name, CapHostname),
		gameType:   clean(cfg.GameType, CapGameType),
		gameID:     clean(cfg.GameID, CapGameType),
		version:    clean(snap.GameVersion, CapVersion),
		plugins:    clean(cfg.Plugins, CapPlugins),
		mapName:    clean(snap.Map, CapMap),
		numPlayers: strconv.Itoa(len(snap.Players)),
		maxPlayers: strconv.Itoa(snap.MaxPlayers),
		hostPort:   port,
		hostIP:     clean(cfg.HostIP, CapHostIP),
	}
}

// EncodeBasic returns the basic stat reply after its header (type byte and
// session id): motd, gametype, map, numplayers and maxplayers as
// NUL-terminated strings, hostport as a little-endian uint16, and hostip.
func EncodeBasic(cfg Config, snap *state.Snapshot) []byte {
	a := advertise(cfg, snap)
	b := make([]byte, 0, 64+len(a.motd)+len(a.mapName)+len(a.gameType)+len(a.hostIP))
	b = appendString(b, a.motd)
	b = appendString(b, a.gameType)
	b = appendString(b, a.mapName)
	b = appendString(b, a.numPlayers)
	b = appendString(b, a.maxPlayers)
	b = binary.LittleEndian.AppendUint16(b, a.hostPort)
	return appendString(b, a.hostIP)
}

// EncodeFull returns the full stat reply after its header, and how many
// players it lists. The reply (with its header) is at most cfg.MaxPacket
// bytes: the vanilla keys always; then as many players as fit, in the
// snapshot's order; then the state's rules, in key order, until one does not
// fit. numplayers is always the whole count.
func EncodeFull(cfg Config, snap *state.Snapshot) ([]byte, int) {
	a := advertise(cfg, snap)
	kv := make([]byte, 0, 512)
	kv = append(kv, splitnumHeader...)
	for i, v := range [...]string{a.motd, a.gameType, a.gameID, a.version, a.plugins,
		a.mapName, a.numPlayers, a.maxPlayers, strconv.Itoa(int(a.hostPort)), a.hostIP} {
		kv = appendString(appendString(kv, vanillaKeys[i]), v)
	}
	limit := cfg.maxPacket() - HeaderLen
	fixed := len(kv) + 1 + len(playerHeader) + 1
	players, listed := encodePlayers(snap.Players, limit-fixed)
	kv = appendRules(kv, snap.Rules, limit-fixed-len(players))
	b := make([]byte, 0, len(kv)+1+len(playerHeader)+len(players)+1)
	b = append(b, kv...)
	b = append(b, 0)
	b = append(b, playerHeader...)
	b = append(b, players...)
	return append(b, 0), listed
}

// encodePlayers returns the NUL-terminated names of the players that fit in
// room bytes, and how many there are. Names empty or blank after cleaning
// are left out: an empty name would end the list, and so would a blank one
// for a client that trims names.
func encodePlayers(players []state.Player, room int) ([]byte, int) {
	var b []byte
	n := 0
	for _, p := range players {
		name := clean(p.Name, state.MaxPlayerName*4)
		if blank(name) {
			continue
		}
		if len(b)+len(name)+1 > room {
			break
		}
		b = appendString(b, name)
		n++
	}
	return b, n
}

// blank reports whether s is empty or only white space and control
// characters, what a client's trim (Java's String.trim, Python's strip)
// turns into the empty string.
func blank(s string) bool {
	return strings.TrimFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7F || unicode.IsSpace(r) }) == ""
}

// appendRules appends the rules that fit in room bytes, in order, stopping
// at the first that does not. Rules whose key is a vanilla key or
// "splitnum", or holds a control character, and rules whose value holds
// "\x01player_", are left out.
func appendRules(kv []byte, rules []state.Rule, room int) []byte {
	used := 0
	for _, r := range rules {
		if !extraKey(r.Key) {
			continue
		}
		v := clean(r.Value, state.MaxRuleValueLen*4)
		if strings.Contains(v, string(playerHeader[:8])) {
			continue // would read as the player section's start to clients that split on it
		}
		size := len(r.Key) + 1 + len(v) + 1
		if used+size > room {
			break
		}
		kv = appendString(appendString(kv, r.Key), v)
		used += size
	}
	return kv
}

// extraKey reports whether a rule key may follow the vanilla keys.
func extraKey(k string) bool {
	if k == "" || k == "splitnum" {
		return false
	}
	for _, v := range vanillaKeys {
		if k == v {
			return false
		}
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] == 0x7F {
			return false
		}
	}
	return true
}

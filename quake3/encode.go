package quake3

import (
	"slices"
	"strconv"
	"strings"

	"github.com/queryd/queryd/state"
)

// Defaults for Config fields left zero.
const (
	// DefaultProtocol is the "protocol" value unless configured: 68, Quake III
	// Arena 1.32's (ioquake3 uses 71, Enemy Territory 84).
	DefaultProtocol = 68
	// DefaultGameName is the "gamename" when neither the config nor the
	// state's folder gives one.
	DefaultGameName = "queryd"
)

// Size limits of the replies.
const (
	// MaxReply caps every reply datagram, challenge included.
	MaxReply = 16 << 10
	// MaxStatusInfo caps the info string of a statusResponse (ioquake3's
	// BIG_INFO_STRING); rules that do not fit are left out.
	MaxStatusInfo = 8 << 10
	// challengeRoom is what an echoed challenge may add to a reply.
	challengeRoom = len(`\challenge\`) + MaxChallenge
)

var (
	infoHeader   = []byte("\xFF\xFF\xFF\xFFinfoResponse\n")
	statusHeader = []byte("\xFF\xFF\xFF\xFFstatusResponse\n")
	challengeKey = []byte(`\challenge\`)
)

// KeyValue is one extra info-string key and its value.
type KeyValue struct {
	Key, Value string
}

// Config is the Quake 3 responder's configuration.
type Config struct {
	// GameName is "gamename"; "" uses the state's folder, else DefaultGameName.
	// Spaces become underscores (dpmaster refuses them).
	GameName string
	Protocol int        // "protocol"; 0 means DefaultProtocol
	GameType int        // "gametype" unless the state's rules set g_gametype
	Extra    []KeyValue // extra keys in both replies, in this order (not the keys queryd sets)
}

// GameNameOf returns the gamename the replies carry for snap.
func (c Config) GameNameOf(snap *state.Snapshot) string {
	switch {
	case c.GameName != "":
		return cleanName(c.GameName)
	case snap.Folder != "":
		return cleanName(snap.Folder)
	}
	return DefaultGameName
}

// infoGameName is the infoResponse's gamename: quake3.gamename, else the
// rule com_gamename (what ioquake3 sends there, e.g. "Quake3Arena" while
// the statusResponse's gamename is the mod's "baseoa"), else as
// GameNameOf.
func (c Config) infoGameName(snap *state.Snapshot) string {
	if c.GameName == "" {
		if v, ok := rule(snap, "com_gamename"); ok && v != "" {
			return cleanName(v)
		}
	}
	return c.GameNameOf(snap)
}

// protocol is the protocol number: the rule protocol, else the rule
// com_protocol (ioquake3's cvar, which its statusResponse carries instead
// of protocol), else quake3.protocol.
func (c Config) protocol(snap *state.Snapshot) string {
	for _, k := range [...]string{"protocol", "com_protocol"} {
		if v, ok := rule(snap, k); ok {
			return v
		}
	}
	if c.Protocol == 0 {
		return strconv.Itoa(DefaultProtocol)
	}
	return strconv.Itoa(c.Protocol)
}

// statusProtocol reports whether the statusResponse carries "protocol":
// not when the state has the rule com_protocol and no rule protocol, as
// ioquake3's statusResponse carries com_protocol and no protocol.
func statusProtocol(snap *state.Snapshot) bool {
	_, p := rule(snap, "protocol")
	_, com := rule(snap, "com_protocol")
	return p || !com
}

func (c Config) gameType(snap *state.Snapshot) string {
	if v, ok := rule(snap, "g_gametype"); ok {
		return v
	}
	return strconv.Itoa(c.GameType)
}

// rule returns the value of the state's rule k (compared without case, as
// Quake 3 does).
func rule(snap *state.Snapshot, k string) (string, bool) {
	for _, r := range snap.Rules {
		if strings.EqualFold(r.Key, k) {
			return r.Value, true
		}
	}
	return "", false
}

// MaxClients is sv_maxclients: the state's max_players, raised to the number
// of players and to at least 1 (dpmaster ignores servers with 0).
func MaxClients(snap *state.Snapshot) int {
	return max(snap.MaxPlayers, len(snap.Players), 1)
}

// humans counts the players that are not bots.
func humans(snap *state.Snapshot) int {
	return len(snap.Players) - snap.Bots()
}

func needPass(snap *state.Snapshot) string {
	if snap.Password {
		return "1"
	}
	return "0"
}

// reserved are the keys queryd sets itself; Config.Extra cannot override them.
var reserved = []string{
	"challenge", "clients", "g_gametype", "g_humanplayers", "g_needpass", "gamename",
	"gametype", "hostname", "mapname", "protocol", "sv_hostname", "sv_maxclients", "version",
}

// addExtras adds the configured extras, except reserved keys.
func (s *infoString) addExtras(extra []KeyValue) {
	for _, kv := range extra {
		if !slices.ContainsFunc(reserved, func(r string) bool { return strings.EqualFold(r, kv.Key) }) {
			s.add(kv.Key, kv.Value)
		}
	}
}

// infoString builds a \key\value info string within a byte budget, skipping
// keys already present (compared without case, as Quake 3 does).
type infoString struct {
	b     []byte
	limit int
	seen  map[string]bool
}

func newInfoString(b []byte, limit int) *infoString {
	return &infoString{b: b, limit: limit, seen: map[string]bool{}}
}

// add appends \key\value unless the key is there already or the pair does
// not fit the budget.
func (s *infoString) add(key, value string) {
	k := strings.ToLower(Clean(key))
	if s.seen[k] || len(s.b)+2+len(key)+len(value) > s.limit {
		return
	}
	s.seen[k] = true
	s.b = append(s.b, '\\')
	s.b = appendClean(s.b, key)
	s.b = append(s.b, '\\')
	s.b = appendClean(s.b, value)
}

// EncodeInfo encodes the infoResponse datagram for snap without a challenge;
// the handler appends \challenge\X when the request carries one. The keys
// come in ioquake3's order: the configured extras, g_needpass, gametype,
// sv_maxclients, g_humanplayers, clients, mapname, hostname, protocol,
// gamename (protocol and gamename as ioquake3 sends them: from the rules
// com_protocol and com_gamename when the state has them).
func EncodeInfo(cfg Config, snap *state.Snapshot) []byte {
	s := newInfoString(append([]byte(nil), infoHeader...), MaxReply-challengeRoom)
	s.addExtras(cfg.Extra)
	s.add("g_needpass", needPass(snap))
	s.add("gametype", cfg.gameType(snap))
	s.add("sv_maxclients", strconv.Itoa(MaxClients(snap)))
	s.add("g_humanplayers", strconv.Itoa(humans(snap)))
	s.add("clients", strconv.Itoa(len(snap.Players)))
	s.add("mapname", snap.Map)
	s.add("hostname", snap.Name)
	s.add("protocol", cfg.protocol(snap))
	s.add("gamename", cfg.infoGameName(snap))
	return s.b
}

// EncodeStatus encodes the statusResponse datagram for snap without a
// challenge; the handler inserts \challenge\X right after the header when
// the request carries one (where ioquake3 puts it). The info string holds
// sv_hostname, mapname, sv_maxclients, protocol (unless the rules have
// com_protocol and no protocol, as ioquake3's), gamename, g_gametype,
// g_needpass, version (when the state has one), the configured extras, then
// the state's rules (a rule named like an earlier key is left out), within
// MaxStatusInfo bytes. Then one `score ping "name"` line per player, as many
// as fit MaxReply. Bots show ping 0; other players at least 1 (clients count
// ping-0 players as bots).
func EncodeStatus(cfg Config, snap *state.Snapshot) []byte {
	s := newInfoString(append([]byte(nil), statusHeader...), len(statusHeader)+MaxStatusInfo)
	s.add("sv_hostname", snap.Name)
	s.add("mapname", snap.Map)
	s.add("sv_maxclients", strconv.Itoa(MaxClients(snap)))
	if statusProtocol(snap) {
		s.add("protocol", cfg.protocol(snap))
	}
	s.add("gamename", cfg.GameNameOf(snap))
	s.add("g_gametype", cfg.gameType(snap))
	s.add("g_needpass", needPass(snap))
	if snap.GameVersion != "" {
		s.add("version", snap.GameVersion)
	}
	s.addExtras(cfg.Extra)
	for _, r := range snap.Rules {
		s.add(r.Key, r.Value)
	}
	b := append(s.b, '\n')
	limit := MaxReply - challengeRoom
	var line []byte
	for i := range snap.Players {
		line = appendPlayer(line[:0], &snap.Players[i])
		if len(b)+len(line) > limit {
			break
		}
		b = append(b, line...)
	}
	return b
}

// UnknownPing is the ping a status line shows for a player whose ping is
// unknown (state.PingUnknown): what ioquake3 shows for a client that is not
// active yet.
const UnknownPing = 999

// appendPlayer appends one status line: score ping "name"\n.
func appendPlayer(b []byte, p *state.Player) []byte {
	ping := int64(p.Ping)
	switch {
	case p.Bot:
		ping = 0
	case ping < 0:
		ping = UnknownPing
	case ping < 1:
		ping = 1
	}
	b = strconv.AppendInt(b, int64(p.Score), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, ping, 10)
	b = append(b, ' ', '"')
	b = appendClean(b, p.Name)
	return append(b, '"', '\n')
}

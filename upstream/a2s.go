package upstream

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/state"
)

// Rules that carry the A2S_INFO fields the state document has no place for.
const (
	RuleA2SProtocol = "a2s_protocol" // A2S_INFO's protocol byte
	RuleA2SAppID    = "a2s_app_id"   // A2S_INFO's app id
	RuleA2SGameID   = "a2s_game_id"  // the EDF game id, when present
)

// FromA2S maps an A2S answer (A2S_INFO, A2S_PLAYER and A2S_RULES; players
// or rules nil: none) to a state document. Every value is fitted to the
// state's limits (see doc.go), so the document is valid for any answer the
// a2s package parses. Players are keyed by their place in the reply ("0",
// "1", …); the Poller gives them stable ids. The INFO bot count marks as
// bots the players connected longest (gamedig's rule: A2S_PLAYER does not
// say which players are bots).
func FromA2S(info *a2s.Info, players []a2s.PlayerInfo, rules [][2]string) map[string]any {
	doc := map[string]any{
		"name":        text(info.Name, state.MaxNameLen),
		"map":         text(info.Map, state.MaxShortLen),
		"folder":      text(info.Folder, state.MaxShortLen),
		"game":        text(info.Game, state.MaxShortLen),
		"version":     text(info.Version, state.MaxShortLen),
		"max_players": num(int64(info.MaxPlayers)),
		"password":    info.Password,
		"vac":         info.VAC,
		"players":     a2sPlayers(players, int(info.Bots)),
	}
	if t := serverTypes[strings.ToLower(info.ServerType)]; t != "" {
		doc["server_type"] = t
	}
	if e := environments[strings.ToLower(info.Environment)]; e != "" {
		doc["environment"] = e
	}
	if info.Port != 0 {
		doc["game_port"] = num(int64(info.Port))
	}
	if info.SteamID != 0 {
		doc["steam_id"] = strconv.FormatUint(info.SteamID, 10)
	}
	if info.SourceTVPort != 0 {
		doc["sourcetv"] = map[string]any{"port": num(int64(info.SourceTVPort)), "name": text(info.SourceTVName, state.MaxShortLen)}
	}
	if info.Keywords != "" {
		doc["keywords"] = text(info.Keywords, state.MaxShortLen)
	}
	r := rules2(rules)
	r.add(RuleA2SProtocol, strconv.Itoa(int(info.Protocol)))
	r.add(RuleA2SAppID, strconv.Itoa(int(info.AppID)))
	if info.GameID != 0 {
		r.add(RuleA2SGameID, strconv.FormatUint(info.GameID, 10))
	}
	doc["rules"] = map[string]any(r)
	return doc
}

// rules2 is A2S_RULES as the document's rules.
func rules2(list [][2]string) rules {
	r := rules{}
	for _, kv := range list {
		r.add(kv[0], kv[1])
	}
	return r
}

var serverTypes = map[string]string{"d": "dedicated", "l": "listen", "p": "proxy"}

var environments = map[string]string{"l": "linux", "w": "windows", "m": "mac", "o": "mac"}

// a2sPlayers maps A2S_PLAYER, keyed by place; the bots players connected
// longest are marked as bots.
func a2sPlayers(list []a2s.PlayerInfo, bots int) map[string]any {
	list = list[:min(len(list), state.MaxPlayers)]
	longest := make([]int, len(list))
	for i := range longest {
		longest[i] = i
	}
	slices.SortStableFunc(longest, func(a, b int) int { return cmp.Compare(list[b].Duration, list[a].Duration) })
	isBot := make([]bool, len(list))
	for _, i := range longest[:min(max(bots, 0), len(list))] {
		isBot[i] = true
	}
	out := make(map[string]any, len(list))
	for i, p := range list {
		m := map[string]any{"name": text(p.Name, state.MaxPlayerName), "score": num(int64(p.Score))}
		if d := float64(p.Duration); d >= 0 && d <= state.MaxPlayerTime { // NaN is neither
			m["time"] = json.Number(strconv.FormatFloat(math.Round(d*1000)/1000, 'f', -1, 64))
		}
		if isBot[i] {
			m["bot"] = true
		}
		out[strconv.Itoa(i)] = m
	}
	return out
}

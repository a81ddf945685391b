package upstream

import (
	"math"
	"strconv"
	"strings"

	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/state"
)

// q3Fields are the statusResponse keys a state field takes, in the order
// they are looked for (the first present wins): each is left out of the
// rules when it gave its field, since every protocol shows that field under
// its own name. "challenge" (the poll's own) is always left out.
var q3Fields = []struct {
	field string
	keys  []string
	value func(v string) (any, bool)
}{
	{"name", []string{"sv_hostname", "hostname"}, textOf(state.MaxNameLen)},
	{"map", []string{"mapname"}, textOf(state.MaxShortLen)},
	{"max_players", []string{"sv_maxclients"}, countOf},
	{"version", []string{"version"}, textOf(state.MaxShortLen)},
	{"folder", []string{"gamename"}, textOf(state.MaxShortLen)},
	{"password", []string{"g_needpass"}, func(v string) (any, bool) { return v != "" && v != "0", true }},
}

func textOf(max int) func(string) (any, bool) {
	return func(v string) (any, bool) { return text(v, max), true }
}

// countOf is a count the state holds (0 to 65535); anything else stays a rule.
func countOf(v string) (any, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 || n > state.MaxMaxPlayers {
		return nil, false
	}
	return num(n), true
}

// FromQuake3 maps a statusResponse to a state document: sv_hostname (or
// hostname) is the name, mapname the map, sv_maxclients max_players,
// version, gamename the folder, g_needpass the password, com_gamename also
// the game; every other key (com_gamename and g_gametype included) is a
// rule. Players are keyed by their line's place ("0", "1", …; the Poller
// gives them stable ids), and a player with ping 0 is a bot (ioquake3 gives
// its bots ping 0). Every value is fitted to the state's limits, so the
// document is valid for any reply the quake3 package parses.
func FromQuake3(st *quake3.Status) map[string]any {
	doc := map[string]any{}
	used := map[string]bool{"challenge": true}
	for _, f := range q3Fields {
		for _, k := range f.keys {
			v, ok := st.Info.Values[k]
			if !ok {
				continue
			}
			if val, ok := f.value(v); ok {
				doc[f.field], used[k] = val, true
			}
			break
		}
	}
	if g, ok := st.Info.Values["com_gamename"]; ok {
		doc["game"] = text(g, state.MaxShortLen)
	}
	r := rules{}
	for _, k := range st.Info.Keys {
		if !used[k] {
			r.add(k, st.Info.Values[k])
		}
	}
	doc["rules"] = map[string]any(r)
	players := make(map[string]any, min(len(st.Players), state.MaxPlayers))
	for i, p := range st.Players[:min(len(st.Players), state.MaxPlayers)] {
		m := map[string]any{
			"name":  text(p.Name, state.MaxPlayerName),
			"score": num(clamp(int64(p.Score), math.MinInt32, math.MaxInt32)),
			"ping":  num(clamp(int64(p.Ping), 0, 65535)),
		}
		if p.Ping == 0 {
			m["bot"] = true
		}
		players[strconv.Itoa(i)] = m
	}
	doc["players"] = players
	return doc
}

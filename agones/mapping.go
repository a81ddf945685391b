package agones

import (
	"sort"
	"strconv"
	"strings"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// Where a GameServer's metadata names state fields (doc.go, "Mapping").
const (
	// SDKPrefix starts the labels and annotations a game sets at run time:
	// the SDK's SetAnnotation("map", …) writes "agones.dev/sdk-map".
	SDKPrefix = "agones.dev/sdk-"
	// ManifestPrefix starts the labels and annotations of the GameServer's
	// manifest (its metadata, or a Fleet's template's).
	ManifestPrefix = "queryd.dev/"
	// RulePrefix follows either prefix in a rule's key:
	// "queryd.dev/rule.mp_timelimit" is the rule mp_timelimit.
	RulePrefix = "rule."
)

// Mapping says which of a GameServer's Lists, Counters and ports the state
// takes its players and game port from ([agones] players_list,
// players_counter, port_name; "" reads none).
type Mapping struct {
	List    string // the List whose values are the players' names
	Counter string // the Counter whose count is the players' number, without the List
	Port    string // the status port whose number is game_port
}

// field is a state field a label or annotation may set: conv turns the
// metadata's text into the field's value (ok false: not one).
type field struct {
	name string
	conv func(string) (any, bool)
}

func text(max int) func(string) (any, bool) {
	return func(s string) (any, bool) { return module.DocText(s, max), true }
}

func asIs(s string) (any, bool) { return s, true }

func integer(s string) (any, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return module.DocNum(n), err == nil
}

func boolean(s string) (any, bool) {
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	return b, err == nil
}

// tags splits "a, b,c" into ["a", "b", "c"] (empty ones left out).
func tags(s string) (any, bool) {
	var out []any
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out, len(out) > 0
}

// fields are the state fields the metadata can set, in the order they are
// set (max_players after the players, whose capacity it overrides).
var fields = []field{
	{"name", text(state.MaxNameLen)},
	{"map", text(state.MaxShortLen)},
	{"game", text(state.MaxShortLen)},
	{"folder", text(state.MaxShortLen)},
	{"version", text(state.MaxShortLen)},
	{"keywords", text(state.MaxShortLen)},
	{"gamemode", text(state.MaxShortLen)},
	{"language", text(state.MaxLanguageLen)},
	{"description", text(state.MaxDescription)},
	{"server_type", asIs},
	{"environment", asIs},
	{"steam_id", asIs},
	{"tags", tags},
	{"password", boolean},
	{"vac", boolean},
	{"protocol", integer},
	{"game_port", integer},
	{"max_players", integer},
}

// metadata is a GameServer's labels and annotations in the order their
// values win: the game's (SDK) annotations, its labels, the manifest's
// annotations, its labels.
type metadata [4]struct {
	prefix string
	kv     map[string]string
}

func newMetadata(m *objectMeta) metadata {
	return metadata{
		{SDKPrefix, m.Annotations}, {SDKPrefix, m.Labels},
		{ManifestPrefix, m.Annotations}, {ManifestPrefix, m.Labels},
	}
}

// mapGameServer maps a GameServer to the state document it stands for
// (doc.go, "Mapping"). It is pure: ids are the List players' ids so far,
// and the ids to keep for the next call come back beside the document.
// Whatever the GameServer holds, the document is one the state accepts.
func mapGameServer(gs *gameServer, m Mapping, ids playerIDs) (map[string]any, playerIDs) {
	doc := map[string]any{}
	md := newMetadata(gs.meta())
	ids = players(doc, gs.Status, m, ids)
	if p, ok := port(gs.Status, m.Port); ok {
		doc["game_port"] = p
	}
	for _, f := range fields {
		setField(doc, md, f)
	}
	if r := rules(md); len(r) > 0 {
		doc["rules"] = map[string]any(r)
	}
	return doc, ids
}

// setField sets f from the first label or annotation naming it whose value
// the state accepts; it leaves doc alone when none does.
func setField(doc map[string]any, md metadata, f field) {
	for _, src := range md {
		s, ok := src.kv[src.prefix+f.name]
		if !ok {
			continue
		}
		if v, ok := f.conv(s); ok && module.DocSet(doc, f.name, v) {
			return
		}
	}
}

// rules collects the rules the metadata sets; of a key set in several
// places the winning place's value is kept.
func rules(md metadata) module.DocRules {
	r := module.DocRules{}
	for _, src := range md {
		pre := src.prefix + RulePrefix
		keys := make([]string, 0, len(src.kv))
		for k := range src.kv {
			if strings.HasPrefix(k, pre) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			r.Add(k[len(pre):], src.kv[k])
		}
	}
	return r
}

// players sets "players" and "max_players" from the List (its values as
// names, its capacity), else from the Counter (its count as that many
// players without names, its capacity), else leaves them out.
func players(doc map[string]any, st *gsStatus, m Mapping, ids playerIDs) playerIDs {
	if l, ok := st.Lists[m.List]; ok && m.List != "" {
		values := l.Values[:min(len(l.Values), state.MaxPlayers)]
		keys, next := ids.assign(values)
		ps := make(map[string]any, len(values))
		for i, v := range values {
			ps[strconv.FormatUint(uint64(keys[i]), 10)] = map[string]any{"name": module.DocText(v, state.MaxPlayerName)}
		}
		doc["players"] = ps
		doc["max_players"] = module.DocNum(module.DocClamp(int64(l.Capacity), 0, state.MaxMaxPlayers))
		return next
	}
	if c, ok := st.Counters[m.Counter]; ok && m.Counter != "" {
		n := module.DocClamp(int64(c.Count), 0, state.MaxPlayers)
		ps := make(map[string]any, n)
		for i := range n {
			ps[strconv.FormatInt(i, 10)] = map[string]any{"name": ""}
		}
		doc["players"] = ps
		doc["max_players"] = module.DocNum(module.DocClamp(int64(c.Capacity), 0, state.MaxMaxPlayers))
	}
	return playerIDs{}
}

// port returns the number of the status port named name, when it is one.
func port(st *gsStatus, name string) (any, bool) {
	if name == "" {
		return nil, false
	}
	for _, p := range st.Ports {
		if p.Name == name && p.Port >= 1 && p.Port <= 65535 {
			return module.DocNum(int64(p.Port)), true
		}
	}
	return nil, false
}

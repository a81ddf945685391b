package quake3

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"strconv"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// Poll asks the game server at server "getstatus <random challenge>" from
// a socket of this poll's own (module.Poller); only a statusResponse that
// echoes the challenge is read (a late reply to an earlier poll, or a
// forged one, is dropped).
func (Module) Poll(ctx context.Context, server netip.AddrPort, opts module.PollOptions) (module.Polled, error) {
	conn, err := module.PollConn(server)
	if err != nil {
		return module.Polled{}, fmt.Errorf("quake3: %w", err)
	}
	defer conn.Close()
	defer module.CloseOnDone(ctx, conn)()
	c := &Client{conn: conn, buf: make([]byte, 65536), Timeout: opts.Timeout}
	st, err := c.Status()
	if err != nil {
		return module.Polled{}, module.Step(0, "getstatus", err)
	}
	return module.Polled{Doc: FromStatus(st)}, nil
}

// pollFields are the statusResponse keys a state field takes, in the order
// they are looked for (the first present wins): each is left out of the
// rules when it gave its field, since every protocol shows that field under
// its own name. "challenge" (the poll's own) is always left out.
var pollFields = []struct {
	field string
	keys  []string
	value func(v string) (any, bool)
}{
	{"name", []string{"sv_hostname", "hostname"}, textOf(state.MaxNameLen)},
	{"map", []string{"mapname"}, textOf(state.MaxShortLen)},
	{"max_players", []string{"sv_maxclients"}, func(v string) (any, bool) { return module.DocCount(v) }},
	{"version", []string{"version"}, textOf(state.MaxShortLen)},
	{"folder", []string{"gamename"}, textOf(state.MaxShortLen)},
	{"password", []string{"g_needpass"}, func(v string) (any, bool) { return v != "" && v != "0", true }},
}

func textOf(max int) func(string) (any, bool) {
	return func(v string) (any, bool) { return module.DocText(v, max), true }
}

// FromStatus maps a statusResponse to a state document (the table in
// doc.go, "Polling a stock server"): sv_hostname (or hostname) is the
// name, mapname the map, sv_maxclients max_players, version, gamename the
// folder, g_needpass the password, com_gamename also the game; every other
// key (com_gamename and g_gametype included) is a rule. Players are keyed
// by their line's place ("0", "1", …), and a player with ping 0 is a bot
// (ioquake3 gives its bots ping 0). Every value is fitted to the state's
// limits, so the document is valid for any reply this package parses.
func FromStatus(st *Status) map[string]any {
	doc := map[string]any{}
	used := map[string]bool{"challenge": true}
	for _, f := range pollFields {
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
		doc["game"] = module.DocText(g, state.MaxShortLen)
	}
	r := module.DocRules{}
	for _, k := range st.Info.Keys {
		if !used[k] {
			r.Add(k, st.Info.Values[k])
		}
	}
	doc["rules"] = map[string]any(r)
	players := make(map[string]any, min(len(st.Players), state.MaxPlayers))
	for i, p := range st.Players[:min(len(st.Players), state.MaxPlayers)] {
		m := map[string]any{
			"name":  module.DocText(p.Name, state.MaxPlayerName),
			"score": module.DocNum(module.DocClamp(int64(p.Score), math.MinInt32, math.MaxInt32)),
			"ping":  module.DocNum(module.DocClamp(int64(p.Ping), 0, 65535)),
		}
		switch {
		case p.Ping == 0:
			m["bot"] = true
		case p.Ping < 0 || p.Ping == UnknownPing: // not active yet (some engines show -1)
			m["ping"] = module.DocNum(state.PingUnknown)
		}
		players[strconv.Itoa(i)] = m
	}
	doc["players"] = players
	return doc
}

var _ module.Poller = Module{}

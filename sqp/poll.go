package sqp

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// pollChunks are the chunks a poll asks: everything the state can hold.
const pollChunks = ChunkServerInfo | ChunkServerRules | ChunkPlayerInfo | ChunkTeamInfo

// Poll asks the game server at server (a Unity/Multiplay SQP server) for a
// challenge and then ServerInfo, ServerRules, PlayerInfo and TeamInfo,
// from a socket of this poll's own (module.Poller). The server's token is
// the nonce: every packet of the reply must carry the token of this poll's
// challenge (others are dropped).
func (Module) Poll(ctx context.Context, server netip.AddrPort, opts module.PollOptions) (module.Polled, error) {
	conn, err := module.PollConn(server)
	if err != nil {
		return module.Polled{}, fmt.Errorf("sqp: %w", err)
	}
	defer conn.Close()
	defer module.CloseOnDone(ctx, conn)()
	c := &Client{conn: conn, buf: make([]byte, 65536), Timeout: opts.Timeout}
	r, err := c.Query(pollChunks)
	if err != nil {
		return module.Polled{}, module.Step(0, "query", err)
	}
	if r.Info == nil {
		return module.Polled{}, badAnswer("the reply has no ServerInfo chunk")
	}
	return module.Polled{Doc: FromResponse(r)}, nil
}

// FromResponse maps a query reply to a state document (the table in
// doc.go, "Polling a stock server"): ServerInfo's server name, game type
// (gamemode), build id (version), map, port (game_port) and max players;
// ServerRules as rules (u8 0 and 1 as "false" and "true", as queryd sends
// booleans; other numbers in decimal); PlayerInfo's name, score (u32 read
// as int32) and ping per player (other player fields have no place and
// are kept as text in the "sqp" object's "other", player.<i>.<field>).
// Without PlayerInfo, ServerInfo's current players become as many unnamed
// players. TeamInfo has no place in the state: its team count is
// sqp.other.teams and each team's fields sqp.other.team.<i>.<field>; the
// rules are ServerRules and nothing else. Every value is fitted to the
// state's limits, so the document is valid for any reply this package
// parses.
func FromResponse(r *Response) map[string]any {
	in := r.Info
	doc := map[string]any{
		"name":        module.DocText(in.ServerName, state.MaxNameLen),
		"gamemode":    module.DocText(in.GameType, state.MaxShortLen),
		"version":     module.DocText(in.BuildID, state.MaxShortLen),
		"map":         module.DocText(in.Map, state.MaxShortLen),
		"max_players": module.DocNum(int64(in.MaxPlayers)),
	}
	if in.Port != 0 {
		doc["game_port"] = module.DocNum(int64(in.Port))
	}
	rules, other := module.DocRules{}, module.DocRules{}
	for _, kv := range r.Rules {
		rules.Add(kv.Key, ruleText(kv.Value))
	}
	if r.Teams != nil && len(r.Teams.Rows) > 0 {
		other.Add("teams", strconv.Itoa(len(r.Teams.Rows)))
		addRows(other, "team.", r.Teams, nil)
	}
	if r.Players != nil {
		addRows(other, "player.", r.Players, statePlayerFields)
	}
	doc["rules"] = map[string]any(rules)
	doc["players"] = pollPlayers(r.Players, int(in.CurrentPlayers))
	if len(other) > 0 {
		doc["sqp"] = map[string]any{"other": map[string]any(other)}
	}
	return doc
}

// statePlayerFields are the PlayerInfo fields the state's players take.
var statePlayerFields = map[string]bool{"name": true, "score": true, "ping": true}

// addRows keeps a table's fields (but those in skip) as text in other:
// <prefix><row>.<field>.
func addRows(other module.DocRules, prefix string, t *Table, skip map[string]bool) {
	for i, row := range t.Rows {
		for j, f := range t.Fields {
			if j < len(row) && !skip[f.Name] {
				other.Add(prefix+strconv.Itoa(i)+"."+f.Name, ruleText(row[j]))
			}
		}
	}
}

// ruleText is a rule value as the state's text.
func ruleText(v Value) string {
	switch {
	case v.Type == String:
		return v.Str
	case v.Type == Uint8 && v.Uint <= 1:
		return strconv.FormatBool(v.Uint == 1)
	}
	return strconv.FormatUint(v.Uint, 10)
}

// pollPlayers maps PlayerInfo, keyed by place (or count unnamed players
// when the table is absent).
func pollPlayers(t *Table, count int) map[string]any {
	if t == nil {
		n := min(count, state.MaxPlayers)
		out := make(map[string]any, n)
		for i := range n {
			out[strconv.Itoa(i)] = map[string]any{"name": ""}
		}
		return out
	}
	n := min(len(t.Rows), state.MaxPlayers)
	out := make(map[string]any, n)
	for i := range n {
		p := map[string]any{"name": ""}
		if v, ok := t.Get(i, "name"); ok {
			p["name"] = module.DocText(v.Str, state.MaxPlayerName)
		}
		if v, ok := t.Get(i, "score"); ok && v.Type != String {
			p["score"] = module.DocNum(int64(int32(uint32(v.Uint))))
		}
		if v, ok := t.Get(i, "ping"); ok && v.Type != String {
			p["ping"] = module.DocNum(module.DocClamp(int64(min(v.Uint, 1<<20)), 0, 65535))
		}
		out[strconv.Itoa(i)] = p
	}
	return out
}

var _ module.Poller = Module{}

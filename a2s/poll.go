package a2s

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// Poll asks the game server at server A2S_INFO, A2S_PLAYER and A2S_RULES
// (with the challenge dance and split replies in the Source and GoldSrc
// layouts) from a socket of this poll's own (module.Poller). A2S_INFO must
// answer; when A2S_PLAYER or A2S_RULES does not (many servers turn RULES
// off), the answer is partial and names them. A2S_INFO carries no nonce:
// its player count is checked against A2S_PLAYER's, and when they
// disagree A2S_INFO is asked again; the answer stands when the second
// INFO agrees with A2S_PLAYER or is the first one again (a server whose
// counts differ by design), else it is a bad answer (a forged INFO met a
// real PLAYER).
func (Module) Poll(ctx context.Context, server netip.AddrPort, opts module.PollOptions) (module.Polled, error) {
	conn, err := module.PollConn(server)
	if err != nil {
		return module.Polled{}, fmt.Errorf("a2s: %w", err)
	}
	defer conn.Close()
	defer module.CloseOnDone(ctx, conn)()
	c := &Client{conn: conn, buf: make([]byte, 65536), Timeout: opts.Timeout}
	info, err := c.Info()
	if err != nil {
		return module.Polled{}, module.Step(0, "A2S_INFO", err)
	}
	var out module.Polled
	players, err := c.Players()
	if err != nil {
		out.Unanswered, out.Partial = append(out.Unanswered, "players"), module.Step(1, "A2S_PLAYER", err)
	} else if info, err = agree(c, info, players); err != nil {
		return module.Polled{}, err
	}
	rules, err := c.Rules()
	if err != nil {
		out.Unanswered = append(out.Unanswered, "rules")
		out.Partial = joinErr(out.Partial, module.Step(2, "A2S_RULES", err))
	}
	out.Doc = FromA2S(info, players, rules)
	return out, nil
}

// agree checks A2S_INFO's player count against A2S_PLAYER's list (see
// Poll) and returns the INFO to use.
func agree(c *Client, info *Info, players []PlayerInfo) (*Info, error) {
	listed := min(len(players), 255)
	if int(info.Players) == listed {
		return info, nil
	}
	again, err := c.Info()
	switch {
	case err != nil:
		return nil, module.Step(0, "A2S_INFO (asked again)", err)
	case int(again.Players) == listed || reflect.DeepEqual(again, info):
		return again, nil
	}
	return nil, badAnswer("A2S_INFO said %d players, then %d, and A2S_PLAYER lists %d: answers that disagree (forged?)", info.Players, again.Players, len(players))
}

func joinErr(a, b error) error {
	if a == nil {
		return b
	}
	return fmt.Errorf("%w; %w", a, b)
}

// FromA2S maps an A2S answer (A2S_INFO, A2S_PLAYER and A2S_RULES; players
// or rules nil: none) to a state document (the table in doc.go, "Polling
// a stock server"): the rules are A2S_RULES and nothing else; INFO's
// protocol byte, app id and game id are the "a2s" object. Every value is fitted to the state's limits, so the
// document is valid for any answer this package parses. Players are keyed
// by their place in the reply ("0", "1", …). The INFO bot count marks as
// bots the players connected longest (gamedig's rule: A2S_PLAYER does not
// say which players are bots).
func FromA2S(info *Info, players []PlayerInfo, rules [][2]string) map[string]any {
	doc := map[string]any{
		"name":        module.DocText(info.Name, state.MaxNameLen),
		"map":         module.DocText(info.Map, state.MaxShortLen),
		"folder":      module.DocText(info.Folder, state.MaxShortLen),
		"game":        module.DocText(info.Game, state.MaxShortLen),
		"version":     module.DocText(info.Version, state.MaxShortLen),
		"max_players": module.DocNum(int64(info.MaxPlayers)),
		"password":    info.Password,
		"vac":         info.VAC,
		"players":     pollPlayers(players, int(info.Bots)),
	}
	if t := serverTypes[strings.ToLower(info.ServerType)]; t != "" {
		doc["server_type"] = t
	}
	if e := environments[strings.ToLower(info.Environment)]; e != "" {
		doc["environment"] = e
	}
	if info.Port != 0 {
		doc["game_port"] = module.DocNum(int64(info.Port))
	}
	if info.SteamID != 0 {
		doc["steam_id"] = strconv.FormatUint(info.SteamID, 10)
	}
	if info.SourceTVPort != 0 {
		doc["sourcetv"] = map[string]any{"port": module.DocNum(int64(info.SourceTVPort)), "name": module.DocText(info.SourceTVName, state.MaxShortLen)}
	}
	if info.Keywords != "" {
		doc["keywords"] = module.DocText(info.Keywords, state.MaxShortLen)
	}
	r := module.DocRules{}
	for _, kv := range rules {
		r.Add(kv[0], kv[1])
	}
	doc["rules"] = map[string]any(r)
	// The INFO numbers the common fields have no place for: the "a2s"
	// object, which A2S_INFO shows and no other protocol does (game_id "0":
	// the server sends none).
	doc["a2s"] = map[string]any{
		"app_id":   module.DocNum(int64(info.AppID)),
		"protocol": module.DocNum(int64(info.Protocol)),
		"game_id":  strconv.FormatUint(info.GameID, 10),
	}
	return doc
}

var serverTypes = map[string]string{"d": "dedicated", "l": "listen", "p": "proxy"}

var environments = map[string]string{"l": "linux", "w": "windows", "m": "mac", "o": "mac"}

// pollPlayers maps A2S_PLAYER, keyed by place; the bots players connected
// longest are marked as bots.
func pollPlayers(list []PlayerInfo, bots int) map[string]any {
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
		m := map[string]any{"name": module.DocText(p.Name, state.MaxPlayerName), "score": module.DocNum(int64(p.Score))}
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

var _ module.Poller = Module{}

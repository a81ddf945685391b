package sagl

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
	"strconv"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// Names in the "sagl" object's "other" of the JSON's fields the state
// document has no place for (and, for a value the state refuses, its
// field's path: "links.<name>", "values.<name>", "branding.<colour>",
// "protocol", "max_players").
const (
	OtherLogoSHA256 = "logo.sha256" // branding.logo's SHA-256 (the logo itself is not fetched)
	OtherLogoSize   = "logo.size"   // and its size in bytes
	OtherOnline     = "online"      // players.online, when the list names another number
)

// Poll asks the game server at server (a SAGL server) for its info JSON
// from a socket of this poll's own (module.Poller): a request without a
// token first, which a SAGL server answers only with a challenge, then
// with the token. SAGL's info parts carry no nonce: an info part that
// comes before the request with the token was sent is dropped, and the
// parts must agree on their serial and add up to their JSON.
func (Module) Poll(ctx context.Context, server netip.AddrPort, opts module.PollOptions) (module.Polled, error) {
	conn, err := module.PollConn(server)
	if err != nil {
		return module.Polled{}, fmt.Errorf("sagl: %w", err)
	}
	defer conn.Close()
	defer module.CloseOnDone(ctx, conn)()
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 2e9
	}
	c := &Client{conn: conn, buf: make([]byte, 65536), Timeout: timeout, Retry: max(timeout/4, 50e6), tokenFirst: true}
	r, err := c.Info()
	if err != nil {
		return module.Polled{}, module.Step(0, "info", err)
	}
	out := module.Polled{Doc: FromInfo(&r.Info)}
	if p := r.Info.Players; p == nil || idsUsable(p.List) {
		out.OwnIDs = true
	}
	return out, nil
}

// FromInfo maps the SAGL JSON to a state document (the table in doc.go,
// "Polling a stock server"): name, version, protocol, the players' list
// (id, name, score, ping), players.max as max_players, description,
// gamemode, language, tags, links, values and the branding's colours and
// show_name are the state's fields of the same names; a value the state
// refuses (a link that is not http(s), a colour that is not #rrggbb) is
// left out of its field and kept as text in the "sagl" object's "other"
// under its path. The logo is not fetched: its SHA-256 and size are kept
// there too. The JSON has no rules, so the document has none. Players are
// keyed by the server's own ids when those are valid state ids, each once;
// else by place (the poller then gives them ids). Every value is fitted to
// the state's limits, so the document is valid for any JSON this package
// parses.
func FromInfo(in *Info) map[string]any {
	doc := map[string]any{
		"name":        module.DocText(in.Name, state.MaxNameLen),
		"version":     module.DocText(in.Version, state.MaxShortLen),
		"description": module.DocText(in.Description, state.MaxDescription),
		"gamemode":    module.DocText(in.Gamemode, state.MaxShortLen),
		"language":    module.DocText(in.Language, state.MaxLanguageLen),
		"rules":       map[string]any{},
	}
	r := module.DocRules{} // the "sagl" object's "other"
	keep := func(field string, v any, text string) {
		if !module.DocSet(doc, field, v) {
			r.Add(field, text)
		}
	}
	keep("protocol", module.DocNum(int64(in.Protocol)), strconv.Itoa(in.Protocol))
	doc["players"] = map[string]any{}
	if p := in.Players; p != nil {
		keep("max_players", module.DocNum(int64(p.Max)), strconv.Itoa(p.Max))
		doc["players"] = pollPlayers(p.List)
		if p.Online != len(p.List) {
			r.Add(OtherOnline, strconv.Itoa(p.Online))
		}
	}
	if len(in.Tags) > 0 {
		tags := make([]any, 0, min(len(in.Tags), state.MaxTags))
		for _, t := range in.Tags[:min(len(in.Tags), state.MaxTags)] {
			tags = append(tags, module.DocText(t, state.MaxTagLen))
		}
		doc["tags"] = tags
	}
	links := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(in.Links)) {
		if len(links) < state.MaxLinks && module.DocSet(map[string]any{}, "links", map[string]any{k: in.Links[k]}) {
			links[k] = in.Links[k]
		} else {
			r.Add("links."+k, in.Links[k])
		}
	}
	if len(links) > 0 {
		doc["links"] = links
	}
	if vals := pollValues(in.Values, r); len(vals) > 0 {
		doc["values"] = vals
	}
	pollBranding(in.Branding, doc, r)
	if len(r) > 0 {
		doc["sagl"] = map[string]any{"other": map[string]any(r)}
	}
	return doc
}

// pollPlayers maps the players' list, keyed by the server's own ids when
// idsUsable (SAGL's ids are stable: the poller keeps them), else by place
// (the poller re-keys them).
func pollPlayers(list []PlayerInfo) map[string]any {
	n := min(len(list), state.MaxPlayers)
	byID := idsUsable(list)
	out := make(map[string]any, n)
	for i, p := range list[:n] {
		k := strconv.Itoa(i)
		if byID {
			k = strconv.FormatUint(uint64(p.ID), 10)
		}
		out[k] = player(p)
	}
	return out
}

// idsUsable reports whether the list's ids can key the state's players:
// each id once among the players the state keeps.
func idsUsable(list []PlayerInfo) bool {
	list = list[:min(len(list), state.MaxPlayers)]
	seen := make(map[uint32]bool, len(list))
	for _, p := range list {
		if seen[p.ID] {
			return false
		}
		seen[p.ID] = true
	}
	return true
}

func player(p PlayerInfo) map[string]any {
	ping := int64(state.PingUnknown) // null, absent or negative
	if p.Ping != nil && *p.Ping >= 0 {
		ping = module.DocClamp(int64(*p.Ping), 0, 65535)
	}
	return map[string]any{
		"name":  module.DocText(p.Name, state.MaxPlayerName),
		"score": module.DocNum(int64(p.Score)),
		"ping":  module.DocNum(ping),
	}
}

// pollValues keeps the values the state takes (strings cut, finite
// numbers, booleans, null); others become rules.
func pollValues(in map[string]any, r module.DocRules) map[string]any {
	out := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(in)) {
		var v any
		switch t := in[k].(type) {
		case string:
			v = module.DocText(t, state.MaxValueLen)
		case float64:
			if !math.IsInf(t, 0) && !math.IsNaN(t) {
				v = json.Number(strconv.FormatFloat(t, 'g', -1, 64))
			}
		case bool, nil:
			v = t
		}
		if len(out) < state.MaxValues && (v != nil || in[k] == nil) && module.DocSet(map[string]any{}, "values", map[string]any{k: v}) {
			out[k] = v
			continue
		}
		b, _ := json.Marshal(in[k])
		r.Add("values."+k, string(b))
	}
	return out
}

// pollBranding keeps the colours and show_name the state takes; the logo
// (not fetched) is a rule.
func pollBranding(b InfoBranding, doc map[string]any, r module.DocRules) {
	br := map[string]any{"show_name": b.ShowName}
	for k, c := range map[string]*string{"primary": b.Primary, "secondary": b.Secondary} {
		if c == nil {
			continue
		}
		if module.DocSet(map[string]any{}, "branding", map[string]any{k: *c}) {
			br[k] = *c
		} else {
			r.Add("branding."+k, *c)
		}
	}
	doc["branding"] = br
	if b.Logo != nil {
		r.Add(OtherLogoSHA256, b.Logo.SHA256)
		r.Add(OtherLogoSize, strconv.FormatInt(int64(b.Logo.Size), 10))
	}
}

var _ module.Poller = Module{}

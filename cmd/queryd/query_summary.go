package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// summaryRow is one protocol's line in queryd query's table and in the
// "summary" of its auto JSON.
type summaryRow struct {
	Protocol   string   `json:"protocol"`
	Name       string   `json:"name,omitempty"`
	Map        string   `json:"map,omitempty"`
	Players    *int     `json:"players,omitempty"`
	MaxPlayers *int     `json:"max_players,omitempty"`
	RTTms      *float64 `json:"rtt_ms,omitempty"` // one request's round trip (the probe)
	Error      string   `json:"error,omitempty"`
}

// summaryPaths says where each protocol's JSON keeps the name, the map, the
// player count and the maximum ("" when the protocol has none).
var summaryPaths = map[string][4]string{
	"a2s":      {"info.name", "info.map", "info.players", "info.max_players"},
	"gamespy4": {"basic.motd", "basic.map", "basic.numplayers", "basic.maxplayers"},
	"sagl":     {"name", "", "players.online", "players.max"},
	"quake3":   {"info.hostname", "info.mapname", "info.clients", "info.sv_maxclients"},
}

// fallbackPaths are tried for a protocol summaryPaths does not know, or
// when its paths find nothing.
var fallbackPaths = [4][]string{
	{"name", "hostname", "motd", "info.name", "info.hostname", "basic.motd"},
	{"map", "mapname", "info.map", "info.mapname", "basic.map"},
	{"players.online", "numplayers", "info.players", "info.clients", "basic.numplayers"},
	{"max_players", "maxplayers", "players.max", "info.max_players", "info.sv_maxclients", "basic.maxplayers"},
}

// row summarizes one protocol's result.
func (r queryResult) row() summaryRow {
	row := summaryRow{Protocol: r.proto}
	if r.probe.replied && r.err == nil {
		ms := float64(r.probe.rtt.Microseconds()) / 1000
		row.RTTms = &ms
	}
	if r.err != nil {
		row.Error = r.failure()
		return row
	}
	doc := asJSONDoc(r.value)
	paths := summaryPaths[r.proto]
	var got [4]any
	for i := range got {
		candidates := fallbackPaths[i]
		if paths[i] != "" {
			candidates = append([]string{paths[i]}, candidates...)
		}
		got[i] = firstFound(doc, candidates)
	}
	row.Name, _ = got[0].(string)
	row.Map, _ = got[1].(string)
	row.Players, row.MaxPlayers = toInt(got[2]), toInt(got[3])
	if row.Players == nil {
		if list, ok := lookup(doc, "players"); ok {
			if a, ok := list.([]any); ok {
				n := len(a)
				row.Players = &n
			}
		}
	}
	return row
}

// asJSONDoc turns a query's value into generic JSON (maps, slices, numbers).
func asJSONDoc(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var doc any
	if json.Unmarshal(b, &doc) != nil {
		return nil
	}
	return doc
}

func firstFound(doc any, paths []string) any {
	for _, p := range paths {
		if v, ok := lookup(doc, p); ok && v != nil {
			return v
		}
	}
	return nil
}

// lookup follows a dotted path of object keys.
func lookup(doc any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil, false
		}
		if doc, ok = m[k]; !ok {
			return nil, false
		}
	}
	return doc, true
}

// toInt reads a JSON number or a decimal string (GameSpy4 and Quake 3 send
// counts as text).
func toInt(v any) *int {
	var n int
	switch x := v.(type) {
	case float64:
		n = int(x)
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return nil
		}
		n = i
	default:
		return nil
	}
	return &n
}

// printTable prints the people's view: one row per protocol that answered,
// then one line per protocol that did not, saying why. Exit 1 when none
// answered (and then no table, only the reasons).
func printTable(w io.Writer, results []queryResult) int {
	var answered, failed []summaryRow
	for _, r := range results {
		if row := r.row(); row.Error != "" {
			failed = append(failed, row)
		} else {
			answered = append(answered, row)
		}
	}
	if len(answered) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PROTOCOL\tNAME\tMAP\tPLAYERS\tROUND TRIP")
		for _, row := range answered {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", row.Protocol, cell(row.Name), cell(row.Map), players(row), rtt(row))
		}
		tw.Flush()
		if len(failed) > 0 {
			fmt.Fprintln(w)
		}
	}
	for _, row := range failed {
		fmt.Fprintf(w, "%s: %s\n", row.Protocol, row.Error)
	}
	if len(answered) == 0 {
		return 1
	}
	return 0
}

// cell makes text fit a table cell: one line, at most 40 characters.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7F {
			return ' '
		}
		return r
	}, s)
	if s == "" {
		return "-"
	}
	if utf8.RuneCountInString(s) > 40 {
		return string([]rune(s)[:39]) + "…"
	}
	return s
}

func players(r summaryRow) string {
	switch {
	case r.Players == nil:
		return "-"
	case r.MaxPlayers == nil:
		return strconv.Itoa(*r.Players)
	}
	return fmt.Sprintf("%d/%d", *r.Players, *r.MaxPlayers)
}

func rtt(r summaryRow) string {
	if r.RTTms == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f ms", *r.RTTms)
}

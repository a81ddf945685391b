package main

import (
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
	s := r.answer.Summary
	row.Name, row.Map, row.Players, row.MaxPlayers = s.Name, s.Map, s.Players, s.MaxPlayers
	return row
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
	if len(answered) > 0 { // the server is there: a protocol that says nothing at all is most likely off
		failed = failed[:0]
		for _, r := range results {
			if r.err == nil {
				continue
			}
			row := r.row()
			if r.unanswered() {
				row.Error = offLine(r)
			}
			failed = append(failed, row)
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

// offLine is the one line -table prints for a protocol that sent nothing
// back while others answered from the same address: most likely it is
// off there (SQP and Bedrock are off in queryd unless enabled).
func offLine(r queryResult) string {
	why := "off there?"
	if m := moduleNamed(r.proto); m != nil && !m.NewSection().On() {
		why = fmt.Sprintf("off by default? [%s] enabled = true turns it on", r.proto)
	}
	if r.rate != "" {
		why += "; or too many requests from here: " + r.rate
	}
	return "no answer (" + why + ")"
}

// moduleNamed returns the registration list's module called name, or nil.
func moduleNamed(name string) protocolModule {
	for _, m := range modules {
		if m.Name() == name {
			return m
		}
	}
	return nil
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

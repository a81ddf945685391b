package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// queryd query prints JSON on stdout by default, as the public contract
// says ("ask a server, print the result as JSON on stdout"), for one
// protocol and for auto; scripts and tests depend on it. -table prints the
// people's view instead: one row per protocol (name, map, players, round
// trip) and, for each protocol that failed, why. -json says JSON explicitly.

// queryOpts are the options every protocol's query takes.
type queryOpts struct {
	timeout time.Duration
	logo    string // SAGL: write the logo to this file
	quiet   bool   // several protocols at once: no per-protocol notes on stderr
}

// queriers maps each -proto name to its client.
var queriers = map[string]func(addr string, q queryOpts) (any, error){
	"a2s":      queryA2S,
	"gamespy4": queryGameSpy4,
	"sagl":     querySAGL,
	"quake3":   queryQuake3,
}

// protoOrder is the order of the protocols in tables and messages (the
// demux order); a protocol missing here comes after them, by name.
var protoOrder = []string{"a2s", "gamespy4", "sagl", "quake3"}

// queryShare is the part of -timeout the query itself may use; the rest is
// kept for the probe that measures the round trip or explains a failure.
const queryShare = 0.75

// cmdQuery asks a server and prints what it says.
func cmdQuery(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	fs.SetOutput(stderr)
	proto := fs.String("proto", "auto", "protocol: a2s, gamespy4, sagl, quake3 or auto (every protocol at once)")
	timeout := fs.Duration("timeout", 3*time.Second, "time limit for the whole command")
	logo := fs.String("logo", "", "sagl: save the logo to this file")
	asJSON := fs.Bool("json", false, "print JSON (the default)")
	table := fs.Bool("table", false, "print a table for people: protocol, name, map, players, round trip")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || (*asJSON && *table) || *timeout <= 0 {
		fmt.Fprintln(stderr, "usage: queryd query [-proto a2s|gamespy4|sagl|quake3|auto] [-timeout D] [-json|-table] [-logo FILE] HOST:PORT")
		return 2
	}
	names := protoNames()
	if *proto != "auto" {
		if _, ok := queriers[*proto]; !ok {
			fmt.Fprintf(stderr, "query: unknown protocol %q (want %s or auto)\n", *proto, strings.Join(names, ", "))
			return 2
		}
		names = []string{*proto}
	}
	q := queryOpts{timeout: *timeout, logo: *logo, quiet: *table || *proto == "auto"}
	results := queryAll(fs.Arg(0), names, q, *table || *proto == "auto")
	if *table {
		return printTable(stdout, results)
	}
	if *proto != "auto" {
		r := results[0]
		if r.err != nil {
			fmt.Fprintf(stderr, "query %s %s: %s\n", r.proto, fs.Arg(0), r.failure())
			return 1
		}
		return printJSON(stdout, stderr, r.value)
	}
	return printAuto(fs.Arg(0), results, stdout, stderr)
}

// protoNames lists the protocols queryd query knows: those of protoOrder
// first, in that order, then any other by name.
func protoNames() []string {
	names := make([]string, 0, len(queriers))
	for n := range queriers {
		names = append(names, n)
	}
	rank := func(n string) int {
		if i := slices.Index(protoOrder, n); i >= 0 {
			return i
		}
		return len(protoOrder)
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := rank(names[i]), rank(names[j]); a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	return names
}

// queryResult is one protocol's answer, or why there is none.
type queryResult struct {
	proto string
	value any         // what the protocol's query returned (JSON-able)
	err   error       // the query's error
	probe probeResult // the single-request probe (round trip, or the diagnosis)
}

// queryAll asks every named protocol at once. With rtt, a protocol that
// answered is probed once more for its round trip; a protocol that failed
// is probed unless its error says why, to tell "no answer" from "answered
// only with challenges".
func queryAll(addr string, names []string, q queryOpts, rtt bool) []queryResult {
	out := make([]queryResult, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = queryOne(addr, name, q, rtt)
		}()
	}
	wg.Wait()
	return out
}

func queryOne(addr, name string, q queryOpts, rtt bool) queryResult {
	deadline := time.Now().Add(q.timeout)
	// In a protocol whose query takes several requests (firstStep), each
	// request may wait half the query's share: one that gets no answer then
	// fails with the client's own error, which says which step went
	// unanswered, before timed cuts the query off. (The SAGL client's
	// timeout bounds its whole call.)
	share := time.Duration(float64(q.timeout) * queryShare)
	qq := q
	qq.timeout = share
	if _, steps := firstStep[name]; steps {
		qq.timeout = share / 2
	}
	// timed allows a little over the share, so that a client ending at its
	// own deadline says why (a bad answer, only challenges) before timed
	// cuts it off; the probe gets the rest of -timeout.
	grace := (q.timeout - share) / 4
	r := queryResult{proto: name}
	r.value, r.err = timed(queriers[name], addr, qq, share+grace)
	if (r.err != nil && !diagnosed(r.err)) || (r.err == nil && rtt) {
		r.probe = probe(name, addr, time.Until(deadline))
	}
	return r
}

// errCutOff is timed's error: the query as a whole took too long.
var errCutOff = errors.New("no complete answer")

// timed runs one query bounded by limit, even if the client blocks longer.
func timed(fn func(string, queryOpts) (any, error), addr string, q queryOpts, limit time.Duration) (any, error) {
	type result struct {
		v   any
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn(addr, q)
		ch <- result{v, err}
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-t.C:
		return nil, fmt.Errorf("%w within %s", errCutOff, limit.Round(time.Millisecond))
	}
}

// printAuto prints every protocol's answer as one JSON object: each
// protocol that answered under its name, "summary" (one row per protocol:
// name, map, players, round trip or error), and "errors" (protocol → why).
// Exit 1 when no protocol answered.
func printAuto(addr string, results []queryResult, stdout, stderr io.Writer) int {
	out := map[string]any{}
	errs := map[string]string{}
	summary := make([]summaryRow, 0, len(results))
	for _, r := range results {
		summary = append(summary, r.row())
		if r.err != nil {
			errs[r.proto] = r.failure()
			continue
		}
		out[r.proto] = r.value
	}
	if len(errs) == len(results) {
		for _, r := range results {
			fmt.Fprintf(stderr, "query %s %s: %s\n", r.proto, addr, errs[r.proto])
		}
		return 1
	}
	out["summary"] = summary
	if len(errs) > 0 {
		out["errors"] = errs
	}
	return printJSON(stdout, stderr, out)
}

func printJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintln(stderr, "query:", err)
		return 1
	}
	return 0
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/queryd/queryd/module"
)

// queryd query prints JSON on stdout by default, as the public contract
// says ("ask a server, print the result as JSON on stdout"), for one
// protocol and for auto; scripts and tests depend on it. -table prints the
// people's view instead: one row per protocol (name, map, players, round
// trip) and, for each protocol that failed, why. -json says JSON explicitly.

// querier is a protocol module's client side, as queryd query uses it.
type querier interface {
	Name() string
	// Query asks addr the protocol's whole query within ctx.
	Query(ctx context.Context, addr string, opts module.QueryOptions) (module.Answer, error)
	// Probe is the protocol's first request, for the round trip and the
	// diagnosis of a failure.
	Probe() module.Probe
}

// queryOpts are the options every protocol's query takes.
type queryOpts struct {
	timeout time.Duration
	logo    string    // write the server's logo to this file (protocols that have one)
	notes   io.Writer // one protocol: its notes for people (stderr); nil for several
}

// querierNamed returns the module called name, or nil.
func querierNamed(name string) querier {
	for _, m := range modules {
		if m.Name() == name {
			return m
		}
	}
	return nil
}

// queryShare is the part of -timeout the query itself may use; the rest is
// kept for the probe that measures the round trip or explains a failure.
const queryShare = 0.75

// cmdQuery asks a server and prints what it says.
func cmdQuery(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	fs.SetOutput(stderr)
	proto := fs.String("proto", "auto", "protocol: "+strings.Join(protoNames(), ", ")+" or auto (every protocol at once)")
	timeout := fs.Duration("timeout", 3*time.Second, "time limit for the whole command")
	logo := fs.String("logo", "", "save the server's logo to this file (protocols that have one)")
	asJSON := fs.Bool("json", false, "print JSON (the default)")
	table := fs.Bool("table", false, "print a table for people: protocol, name, map, players, round trip")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || (*asJSON && *table) || *timeout <= 0 {
		fmt.Fprintf(stderr, "usage: queryd query [-proto %s|auto] [-timeout D] [-json|-table] [-logo FILE] HOST:PORT\n", strings.Join(protoNames(), "|"))
		return 2
	}
	if err := checkHostPort(fs.Arg(0)); err != nil {
		fmt.Fprintln(stderr, "query:", err)
		return 2
	}
	names := protoNames()
	if *proto != "auto" {
		if querierNamed(*proto) == nil {
			fmt.Fprintf(stderr, "query: unknown protocol %q (want %s or auto)\n", *proto, strings.Join(names, ", "))
			return 2
		}
		names = []string{*proto}
	}
	q := queryOpts{timeout: *timeout, logo: *logo}
	if !*table && *proto != "auto" {
		q.notes = stderr
	}
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
		return printJSON(stdout, stderr, r.answer.Full)
	}
	return printAuto(fs.Arg(0), results, stdout, stderr)
}

// checkHostPort refuses an address without a port before anything is sent:
// every protocol has its own usual port (A2S 27015, Quake 3 27960, …) and a
// game server's is often another, so queryd query does not guess one.
func checkHostPort(addr string) error {
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return fmt.Errorf("%q: give HOST:PORT, the server's query port (e.g. 127.0.0.1:27015, [::1]:27015)", addr)
	}
	return nil
}

// protoNames lists the protocols queryd query knows, in demux order.
func protoNames() []string {
	names := make([]string, len(modules))
	for i, m := range modules {
		names[i] = m.Name()
	}
	return names
}

// queryResult is one protocol's answer, or why there is none.
type queryResult struct {
	proto  string
	answer module.Answer // what the protocol's query returned
	err    error         // the query's error
	probe  probeResult   // the single-request probe (round trip, or the diagnosis)
	rate   string        // the protocol's per-source rate in words (module.Probe.Rate)
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
	m := querierNamed(name)
	// In a protocol whose query takes several requests, each request may
	// wait half the query's share: one that gets no answer then fails with
	// the client's own error, which says which step went unanswered, before
	// the context cuts the query off. (A client whose timeout bounds its
	// whole call takes the context's deadline instead.) The context allows
	// a little over the share, so that a client ending at its own deadline
	// says why (a bad answer, only challenges) before it is cut off; the
	// probe gets the rest of -timeout.
	share := time.Duration(float64(q.timeout) * queryShare)
	grace := (q.timeout - share) / 4
	opts := module.QueryOptions{Logo: q.logo, Notes: q.notes, Steps: share / 2}
	r := queryResult{proto: name, rate: m.Probe().Rate}
	r.answer, r.err = timed(m, addr, opts, share, share+grace)
	if (r.err != nil && !diagnosed(r.err)) || (r.err == nil && rtt) {
		r.probe = probe(m.Probe(), addr, time.Until(deadline))
	}
	return r
}

// errCutOff is timed's error: the query as a whole took too long.
var errCutOff = errors.New("no complete answer")

// timed runs one query whose client may take share, cut off at limit even
// if the client blocks longer.
func timed(m querier, addr string, opts module.QueryOptions, share, limit time.Duration) (module.Answer, error) {
	type result struct {
		a   module.Answer
		err error
	}
	ch := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), share)
	defer cancel()
	go func() {
		a, err := m.Query(ctx, addr, opts)
		ch <- result{a, err}
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.a, r.err
	case <-t.C:
		return module.Answer{}, fmt.Errorf("%w within %s", errCutOff, limit.Round(time.Millisecond))
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
		out[r.proto] = r.answer.Full
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

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// queryOpts are the options every protocol's query takes.
type queryOpts struct {
	timeout time.Duration
	logo    string // SAGL: write the logo to this file
}

// queriers maps each -proto name to its client.
var queriers = map[string]func(addr string, q queryOpts) (any, error){
	"a2s":      queryA2S,
	"gamespy4": queryGameSpy4,
	"sagl":     querySAGL,
	"quake3":   queryQuake3,
}

// cmdQuery asks a server and prints what it says as JSON.
func cmdQuery(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	fs.SetOutput(stderr)
	proto := fs.String("proto", "auto", "protocol: a2s, gamespy4, sagl, quake3 or auto (every protocol)")
	timeout := fs.Duration("timeout", 3*time.Second, "time limit for the whole command")
	logo := fs.String("logo", "", "sagl: save the logo to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: queryd query [-proto a2s|gamespy4|sagl|quake3|auto] [-timeout D] HOST:PORT")
		return 2
	}
	addr := fs.Arg(0)
	q := queryOpts{timeout: *timeout, logo: *logo}
	if *proto == "auto" {
		return queryAuto(addr, q, stdout, stderr)
	}
	fn, ok := queriers[*proto]
	if !ok {
		fmt.Fprintf(stderr, "query: unknown protocol %q (want %s or auto)\n", *proto, strings.Join(protoNames(), ", "))
		return 2
	}
	res, err := timed(fn, addr, q)
	if err != nil {
		fmt.Fprintf(stderr, "query %s %s: %v\n", *proto, addr, err)
		return 1
	}
	return printJSON(stdout, stderr, res)
}

func protoNames() []string {
	names := make([]string, 0, len(queriers))
	for n := range queriers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// timed runs one query bounded by q.timeout, even if the client blocks longer.
func timed(fn func(string, queryOpts) (any, error), addr string, q queryOpts) (any, error) {
	type result struct {
		v   any
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn(addr, q)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-time.After(q.timeout):
		return nil, fmt.Errorf("no answer within %s", q.timeout)
	}
}

// queryAuto asks every protocol at once and prints those that answered.
func queryAuto(addr string, q queryOpts, stdout, stderr io.Writer) int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := map[string]any{}
	errs := map[string]string{}
	for name, fn := range queriers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := timed(fn, addr, q)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[name] = err.Error()
			} else {
				out[name] = v
			}
		}()
	}
	wg.Wait()
	if len(out) == 0 {
		for _, n := range protoNames() {
			fmt.Fprintf(stderr, "query %s %s: %s\n", n, addr, errs[n])
		}
		return 1
	}
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

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime/pprof"
	"sync"
	"time"
)

// maxRun bounds -warmup plus -duration.
const maxRun = 5 * time.Minute

// loadConfig is the load subcommand's settings.
type loadConfig struct {
	target   netip.AddrPort
	ports    int // servers on target's address at ports target.Port() ... +ports-1; source i loads the (i % ports)th
	proto    *proto
	sources  int
	inflight int
	batch    int
	duration time.Duration
	warmup   time.Duration
	count    int64
	timeout  time.Duration
	refresh  time.Duration
	io       string
	pid      int
	profile  string
}

// loadResult is what one load run measured.
type loadResult struct {
	stats
	elapsed   time.Duration // the measurement window actually run
	serverCPU time.Duration // -pid's CPU over the window; <0 when not measured
	selfCPU   time.Duration // the generator's own CPU over the window
}

func parseLoadFlags(args []string, stderr io.Writer) (*loadConfig, error) {
	fs := flag.NewFlagSet("queryd-bench load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("target", "127.0.0.1:27015", "server to load: IP:PORT on loopback (127.0.0.0/8 or ::1) only")
	name := fs.String("proto", "a2s_info", "query to send: "+protoNames())
	c := &loadConfig{}
	fs.IntVar(&c.ports, "ports", 1, "servers on consecutive ports from -target's: source i loads port + i % ports (host mode: many servers in one queryd)")
	fs.IntVar(&c.sources, "sources", 16, "source sockets, one per IP from 127.0.0.2 up (IPv6: ports on ::1)")
	fs.IntVar(&c.inflight, "inflight", 32, "requests in flight per socket")
	fs.IntVar(&c.batch, "batch", 64, "datagrams per sendmmsg/recvmmsg call")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measurement time (with -warmup at most 5m)")
	fs.DurationVar(&c.warmup, "warmup", 0, "load before measuring (not counted)")
	fs.Int64Var(&c.count, "count", 0, "stop after this many token-bearing requests in all (0: no limit)")
	fs.DurationVar(&c.timeout, "timeout", time.Second, "give up on a request after this long")
	fs.DurationVar(&c.refresh, "refresh", 20*time.Second, "ask for a new token when the one held is this old (tokens live 30-60 s)")
	fs.StringVar(&c.io, "io", "poll", "socket waits: poll (non-blocking sockets, Go netpoller) or block (blocking recvmmsg outside the netpoller)")
	fs.StringVar(&c.profile, "cpuprofile", "", "write the generator's CPU profile to this file")
	fs.IntVar(&c.pid, "pid", 0, "server process whose CPU to measure from /proc/PID/stat (0: none)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if c.target, err = parseTarget(*target); err != nil {
		return nil, err
	}
	if c.proto, err = lookupProto(*name); err != nil {
		return nil, err
	}
	return c, c.validate()
}

func (c *loadConfig) validate() error {
	switch {
	case c.ports < 1 || c.ports > 1024 || int(c.target.Port())+c.ports-1 > 65535:
		return fmt.Errorf("-ports %d: want 1 to 1024, the last port at most 65535", c.ports)
	case c.sources < 1 || c.sources > maxSources:
		return fmt.Errorf("-sources %d: want 1 to %d", c.sources, maxSources)
	case c.inflight < 1 || c.inflight > 4096:
		return fmt.Errorf("-inflight %d: want 1 to 4096", c.inflight)
	case c.batch < 1 || c.batch > 1024:
		return fmt.Errorf("-batch %d: want 1 to 1024", c.batch)
	case c.duration <= 0 || c.warmup < 0 || c.duration+c.warmup > maxRun:
		return fmt.Errorf("-duration %s -warmup %s: want a duration above 0, together at most %s", c.duration, c.warmup, maxRun)
	case c.count < 0:
		return fmt.Errorf("-count %d: want 0 (no limit) or more", c.count)
	case c.timeout < time.Millisecond || c.timeout > 10*time.Second:
		return fmt.Errorf("-timeout %s: want 1ms to 10s", c.timeout)
	case c.refresh < time.Second || c.refresh > 30*time.Second:
		return fmt.Errorf("-refresh %s: want 1s to 30s (a token lives at least 30 s)", c.refresh)
	case c.io != "block" && c.io != "poll":
		return fmt.Errorf("-io %q: want block or poll", c.io)
	case c.pid < 0:
		return fmt.Errorf("-pid %d: want a process id", c.pid)
	}
	return nil
}

// cmdLoad runs the load generator and prints its report.
func cmdLoad(args []string, stdout, stderr io.Writer) int {
	c, err := parseLoadFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "queryd-bench load:", err)
		}
		return 2
	}
	if c.profile != "" {
		stop, err := startProfile(c.profile)
		if err != nil {
			fmt.Fprintln(stderr, "queryd-bench load:", err)
			return 1
		}
		defer stop()
	}
	r, err := runLoad(c)
	if err != nil {
		fmt.Fprintln(stderr, "queryd-bench load:", err)
		return 1
	}
	report(stdout, c, r)
	if r.answered == 0 {
		fmt.Fprintln(stderr, "queryd-bench load: no answers")
		return 1
	}
	return 0
}

// startProfile starts a CPU profile into path and returns its stop.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// runLoad opens the sources, runs the workers and measures the window.
func runLoad(c *loadConfig) (*loadResult, error) {
	workers, err := openWorkers(c)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, w := range workers {
			w.io.close()
		}
	}()
	start := time.Now()
	errs := make([]error, len(workers))
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.run(start)
		}()
	}
	go func() { wg.Wait(); close(done) }()
	r, err := measure(c, start, done)
	<-done
	if err == nil {
		err = errors.Join(errs...)
	}
	if err != nil {
		return nil, err
	}
	for _, w := range workers {
		r.add(&w.st)
	}
	if r.elapsed < c.duration && r.last > 0 {
		r.elapsed = time.Duration(r.last) - c.warmup // -count: up to the last answer
	}
	return r, nil
}

// openWorkers opens one socket per source and splits -count among them.
func openWorkers(c *loadConfig) ([]*worker, error) {
	var out []*worker
	for i := 0; i < c.sources; i++ {
		quota := int64(-1)
		if c.count > 0 {
			quota = c.count / int64(c.sources)
			if int64(i) < c.count%int64(c.sources) {
				quota++
			}
		}
		target := netip.AddrPortFrom(c.target.Addr(), c.target.Port()+uint16(i%max(c.ports, 1)))
		b, err := openSource(sourceAddr(c.target, i), target, c.io, c.batch)
		if err != nil {
			for _, w := range out {
				w.io.close()
			}
			return nil, fmt.Errorf("source %d: %w", i, err)
		}
		w := newWorker(c, c.proto, i, quota)
		w.io = b
		out = append(out, w)
	}
	return out, nil
}

// measure samples the server's and the generator's CPU at the start and
// the end of the window (or when the workers finish first).
func measure(c *loadConfig, start time.Time, done <-chan struct{}) (*loadResult, error) {
	wait := func(until time.Duration) {
		t := time.NewTimer(time.Until(start.Add(until)))
		defer t.Stop()
		select {
		case <-t.C:
		case <-done:
		}
	}
	wait(c.warmup)
	t0, srv0, self0, err := sample(c.pid, start)
	if err != nil {
		return nil, err
	}
	wait(c.warmup + c.duration)
	t1, srv1, self1, err := sample(c.pid, start)
	if err != nil {
		return nil, err
	}
	r := &loadResult{elapsed: c.duration, serverCPU: -1, selfCPU: self1 - self0}
	if t1 < c.warmup+c.duration {
		r.elapsed = t1 - max(t0, c.warmup) // -count ended the run early
	}
	if c.pid > 0 {
		r.serverCPU = srv1 - srv0
	}
	return r, nil
}

// sample reads the time since start, the server's CPU (when pid > 0) and
// the generator's own CPU.
func sample(pid int, start time.Time) (at, server, self time.Duration, err error) {
	at = time.Since(start)
	if pid > 0 {
		if server, err = procCPU(pid); err != nil {
			return 0, 0, 0, err
		}
	}
	self, err = selfCPU()
	return at, server, self, err
}

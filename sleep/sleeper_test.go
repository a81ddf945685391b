package sleep

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/internal/activity"
)

// gameServer stands for the game server the commands start and stop: a
// file that start makes and stop removes; it answers (Ready) while the
// file is there. Forward records what the sleeper passes on to it.
type gameServer struct {
	dir   string
	delay time.Duration // each Forward takes this long (a loaded relay)
	mu    sync.Mutex
	got   []string
}

func (g *gameServer) up() bool {
	_, err := os.Stat(filepath.Join(g.dir, "up"))
	return err == nil
}

func (g *gameServer) Forward(req []byte, src netip.AddrPort, _ netip.Addr, _ dgram.Sender) bool {
	time.Sleep(g.delay)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.got = append(g.got, fmt.Sprintf("%s %s", src, req))
	return true
}

func (g *gameServer) forwarded() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.got...)
}

// script writes an executable /bin/sh script into g.dir.
func (g *gameServer) script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(g.dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// runs counts the lines a script appended to g.dir/log that start with what.
func (g *gameServer) runs(what string) int {
	b, _ := os.ReadFile(filepath.Join(g.dir, "log"))
	return strings.Count(string(b), what+"\n")
}

type testSleeper struct {
	*Sleeper
	g      *gameServer
	rest   *activity.Rest
	reg    *prometheus.Registry
	asleep chan bool
	log    *bytes.Buffer
	logMu  *sync.Mutex
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (ts *testSleeper) logText() string {
	ts.logMu.Lock()
	defer ts.logMu.Unlock()
	return ts.log.String()
}

// newTestSleeper runs a Sleeper over g's scripts (start: the startBody
// script; stop: removes the file) until the test ends.
func newTestSleeper(t *testing.T, after, ready time.Duration, startBody string) *testSleeper {
	t.Helper()
	needSh(t)
	g := &gameServer{dir: t.TempDir()}
	start := g.script(t, "start", "echo start >> "+g.dir+"/log\n"+startBody)
	stop := g.script(t, "stop", "echo stop >> "+g.dir+"/log\nrm -f "+g.dir+"/up")
	ts := &testSleeper{g: g, rest: &activity.Rest{}, reg: prometheus.NewRegistry(), asleep: make(chan bool, 100), log: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	var err error
	ts.Sleeper, err = New(Options{
		Settings: Settings{After: after, ReadyTimeout: ready, StopTimeout: 5 * time.Second, Start: []string{start}, Stop: []string{stop},
			WakesPerHour: 3, Hold: HoldLimits{PerSource: 4, BytesPerSource: 1 << 10, Total: 8, Bytes: 4 << 10}},
		Rest:     ts.rest,
		Ready:    func(time.Time) bool { return g.up() },
		Asleep:   func(b bool) error { ts.asleep <- b; return nil },
		Relay:    g,
		Logger:   slog.New(slog.NewTextHandler(lockedWriter{ts.logMu, ts.log}, nil)),
		Registry: ts.reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ts.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ts
}

func (ts *testSleeper) waitPhase(t *testing.T, want Phase, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		st := ts.Status()
		if st.Phase == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("phase %s after %s, want %s (log:\n%s)", st.Phase, limit, want, ts.logText())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var _ io.Writer = lockedWriter{}

// metric is the value of name's series with a label whose value is label.
func (ts *testSleeper) metric(t *testing.T, name, label string) float64 {
	t.Helper()
	mfs, err := ts.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					return m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s}", name, label)
	return 0
}

// TestSleeperCycle: idle, the game server is stopped after after (the
// rest down, the state emptied of players); game datagrams from two
// players wake it once, are held, and reach the game server in the order
// they came once it answers; then the way is straight again and it sleeps
// again after after.
func TestSleeperCycle(t *testing.T) {
	ts := newTestSleeper(t, 300*time.Millisecond, 10*time.Second, "touch $(dirname $0)/up")
	ts.waitPhase(t, Asleep, 5*time.Second)
	if !ts.rest.Resting() || !ts.rest.IsDown() || ts.g.runs("stop") != 1 || !<-ts.asleep {
		t.Fatalf("asleep: resting %v down %v, stops %d", ts.rest.Resting(), ts.rest.IsDown(), ts.g.runs("stop"))
	}
	a := netip.MustParseAddrPort("192.0.2.1:1000")
	b := netip.MustParseAddrPort("192.0.2.2:2000")
	for i, s := range []netip.AddrPort{a, b, a, b, a} {
		if !ts.Forward([]byte(fmt.Sprint("d", i)), s, netip.Addr{}, nil) {
			t.Fatalf("datagram %d not held", i)
		}
	}
	ts.waitPhase(t, Idle, 10*time.Second)
	if <-ts.asleep {
		t.Fatal("awake: the state's players not restored")
	}
	want := []string{"192.0.2.1:1000 d0", "192.0.2.2:2000 d1", "192.0.2.1:1000 d2", "192.0.2.2:2000 d3", "192.0.2.1:1000 d4"}
	if got := ts.g.forwarded(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("passed on %q, want %q", got, want)
	}
	ts.Forward([]byte("straight"), a, netip.Addr{}, nil)
	if got := ts.g.forwarded(); len(got) != 6 || ts.rest.Resting() {
		t.Fatalf("awake: %q, resting %v", got, ts.rest.Resting())
	}
	if ts.g.runs("start") != 1 || ts.metric(t, "queryd_sleep_wakes_total", "join") != 1 {
		t.Fatalf("starts %d", ts.g.runs("start"))
	}
	if st := ts.Status(); st.Wakes["join"] != 1 || st.LastWakeTook <= 0 || st.Held != 0 {
		t.Fatalf("status %+v", st)
	}
	ts.waitPhase(t, Asleep, 5*time.Second)
	if ts.g.runs("stop") != 2 {
		t.Fatalf("stops %d", ts.g.runs("stop"))
	}
}

// TestSleeperWakeFails: a start that exits non-zero, one that hangs past
// ready_timeout (killed), and one that starts nothing that answers: each
// is logged with its reason (and the command's output), the held
// datagrams are dropped, stop runs to clean up, and it is asleep again;
// start never runs in a loop.
func TestSleeperWakeFails(t *testing.T) {
	if testing.Short() {
		t.Skip("three wakes that fail, two of them at ready_timeout: -short")
	}
	for _, tc := range []struct {
		reason, body, out string
	}{
		{FailStart, "echo unit not found >&2; exit 3", "unit not found"},
		{FailStartTimeout, "echo starting; sleep 60", "starting"},
		{FailNotReady, "echo started a server that never answers", "never answers"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			ts := newTestSleeper(t, 200*time.Millisecond, time.Second, tc.body)
			ts.waitPhase(t, Asleep, 5*time.Second)
			if err := ts.Wake(); err != nil {
				t.Fatal(err)
			}
			ts.Forward([]byte("held"), netip.MustParseAddrPort("192.0.2.1:1"), netip.Addr{}, nil)
			deadline := time.Now().Add(10 * time.Second)
			for ts.Status().Failures[tc.reason] != 1 || ts.Status().Phase != Asleep {
				if time.Now().After(deadline) {
					t.Fatalf("status %+v\nlog:\n%s", ts.Status(), ts.logText())
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond) // nothing runs again by itself
			st := ts.Status()
			if ts.g.runs("start") != 1 || ts.g.runs("stop") != 2 || st.Held != 0 || len(ts.g.forwarded()) != 0 {
				t.Fatalf("starts %d stops %d held %d passed %q", ts.g.runs("start"), ts.g.runs("stop"), st.Held, ts.g.forwarded())
			}
			deadline = time.Now().Add(5 * time.Second)
			for !strings.Contains(ts.Status().LastFailure.Output, tc.out) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if f := ts.Status().LastFailure; f.Reason != tc.reason || !strings.Contains(f.Output, tc.out) {
				t.Fatalf("last failure %+v", f)
			}
			if log := ts.logText(); !strings.Contains(log, "reason="+tc.reason) || !strings.Contains(log, tc.out) {
				t.Fatalf("log:\n%s", log)
			}
			if !ts.rest.Resting() || ts.metric(t, "queryd_sleep_dropped_total", dropWakeFailed) != 1 {
				t.Fatal("asleep again, the held datagram dropped")
			}
		})
	}
}

// TestSleeperWakesPerHour: a flood of game datagrams while asleep wakes it
// at most wakes_per_hour (3) times; the rest are refused and counted.
func TestSleeperWakesPerHour(t *testing.T) {
	ts := newTestSleeper(t, 200*time.Millisecond, 5*time.Second, "touch $(dirname $0)/up")
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ts.Status().Refused == 0; i++ {
		ts.Forward([]byte("x"), src(i%10_000), netip.Addr{}, nil)
		if time.Now().After(deadline) {
			t.Fatalf("no wake refused: %+v", ts.Status())
		}
		if i%100 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	if st := ts.Status(); st.Wakes["join"] != 3 || ts.g.runs("start") != 3 {
		t.Fatalf("wakes %v, starts %d", st.Wakes, ts.g.runs("start"))
	}
	if err := ts.Wake(); err == nil || !strings.Contains(err.Error(), "3 wakes began in the last hour") {
		t.Fatalf("the feed's wake past the bound: %v", err)
	}
}

// TestSleeperQueryNeverWakes: while asleep, a datagram a protocol claims
// (one that is off: relayed while the game server runs) neither wakes it
// nor is held.
func TestSleeperQueryNeverWakes(t *testing.T) {
	ts := newTestSleeper(t, 200*time.Millisecond, 5*time.Second, "touch $(dirname $0)/up")
	ts.opts.Query = func(p []byte) bool { return bytes.HasPrefix(p, []byte("\xFF\xFF\xFF\xFFTSource")) }
	ts.waitPhase(t, Asleep, 5*time.Second)
	for i := 0; i < 1000; i++ {
		if ts.Forward([]byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00"), src(i), netip.Addr{}, nil) {
			t.Fatal("a query was held")
		}
	}
	time.Sleep(100 * time.Millisecond)
	if st := ts.Status(); st.Phase != Asleep || st.Wakes["join"] != 0 || ts.g.runs("start") != 0 {
		t.Fatalf("queries woke it: %+v", st)
	}
	if n := ts.metric(t, "queryd_sleep_dropped_total", "query"); n != 1000 {
		t.Fatalf("dropped as queries: %v", n)
	}
}

// TestSleeperDeliverEnds: a flood that keeps the hold full while the held
// datagrams are passed on (each taking 1 ms) cannot keep the way shut:
// it opens within a few rounds, and the cycle goes on (asleep again after
// after, the flood refused past the hour's wakes).
func TestSleeperDeliverEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood across a wake: -short")
	}
	ts := newTestSleeper(t, 300*time.Millisecond, 5*time.Second, "touch $(dirname $0)/up")
	ts.g.delay = time.Millisecond
	ts.waitPhase(t, Asleep, 5*time.Second)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for f := 0; f < 4; f++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := f; ; i += 4 {
				select {
				case <-stop:
					return
				default:
				}
				ts.Forward([]byte("flood"), src(i%10_000), netip.Addr{}, nil)
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	ts.waitPhase(t, Idle, 10*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for !ts.pass.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("the way is still shut 5 s after the wake: %+v", ts.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.waitPhase(t, Asleep, 10*time.Second)
}

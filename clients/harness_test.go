// Package clients_test runs the game-engine feed clients (clients/cpp,
// clients/csharp, clients/godot) against a live queryd: each client's
// example feeds a state with non-ASCII names, a player joining and one
// leaving, and a score change; A2S and SAGL must answer that state. Then
// queryd is stopped and started again under the running client, which must
// reconnect and send the state again on its own. recover_test.go runs the
// recover rows (a rejected patch never sticks) for every client, the
// examples/ feeders and feed.Client included. A test skips, saying
// which tool is missing, when the compiler or engine is not installed
// (.ci/run installs them), and under -short. The tests mostly wait, so they
// run 4 at a time (t.Parallel), each against its own queryd.
package clients_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/internal/testkit"
	"github.com/queryd/queryd/sagl"
)

// The state every example leaves (see the examples).
const (
	wantName = "Ünïcødé ✓ Server"
	wantMap  = "de_dust2"
	wantMOTD = `say "hi" \o/`
)

// wantPlayers is "name score" of the players every example leaves, sorted.
var wantPlayers = []string{"Zoë 5", "Σωκράτης 1"}

const feedToken = "clients-test-token-0123456789abcdef"

// served is what A2S and SAGL answer, in the form the examples' state is
// compared in.
type served struct {
	a2sName, a2sMap, motd, saglName string
	a2sPlayers, saglPlayers         []string
}

func (s served) String() string {
	return fmt.Sprintf("A2S %q on %q, players %q, motd %q; SAGL %q, players %q", s.a2sName, s.a2sMap, s.a2sPlayers, s.motd, s.saglName, s.saglPlayers)
}

func (s served) fed() bool {
	return s.a2sName == wantName && s.a2sMap == wantMap && s.motd == wantMOTD && s.saglName == wantName &&
		strings.Join(s.a2sPlayers, ",") == strings.Join(wantPlayers, ",") &&
		strings.Join(s.saglPlayers, ",") == strings.Join(wantPlayers, ",")
}

// ask queries queryd over A2S and SAGL.
func (d *daemon) ask() (served, error) {
	var s served
	ac, err := a2s.Dial(d.UDPAddr)
	if err != nil {
		return s, err
	}
	defer ac.Close()
	info, err := ac.Info()
	if err != nil {
		return s, fmt.Errorf("A2S_INFO: %w", err)
	}
	s.a2sName, s.a2sMap = info.Name, info.Map
	ps, err := ac.Players()
	if err != nil {
		return s, fmt.Errorf("A2S_PLAYER: %w", err)
	}
	for _, p := range ps {
		s.a2sPlayers = append(s.a2sPlayers, p.Name+" "+strconv.Itoa(int(p.Score)))
	}
	sort.Strings(s.a2sPlayers)
	rules, err := ac.Rules()
	if err != nil {
		return s, fmt.Errorf("A2S_RULES: %w", err)
	}
	for _, r := range rules {
		if r[0] == "motd" {
			s.motd = r[1]
		}
	}
	sc, err := sagl.Dial(d.UDPAddr)
	if err != nil {
		return s, err
	}
	defer sc.Close()
	res, err := sc.Info()
	if err != nil {
		return s, fmt.Errorf("SAGL: %w", err)
	}
	s.saglName = res.Info.Name
	if res.Info.Players != nil {
		for _, p := range res.Info.Players.List {
			s.saglPlayers = append(s.saglPlayers, p.Name+" "+strconv.Itoa(int(p.Score)))
		}
	}
	sort.Strings(s.saglPlayers)
	return s, nil
}

// waitFed waits until A2S and SAGL answer the examples' state.
func (d *daemon) waitFed(t *testing.T, c *client, what string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var last served
	var lastErr error
	for time.Since(start) < limit {
		last, lastErr = d.ask()
		if lastErr == nil && last.fed() {
			return time.Since(start)
		}
		if c.exited() {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: queryd does not answer the client's state within %v: %v (%v)\nclient output:\n%s\nqueryd log:\n%s", what, limit, last, lastErr, c.out, d.Output())
	return 0
}

// client is a running client example.
type client struct {
	cmd  *exec.Cmd
	out  *testkit.Buffer
	done chan struct{}
}

func startClient(t *testing.T, cmd *exec.Cmd, env []string) *client {
	t.Helper()
	c := &client{cmd: cmd, out: &testkit.Buffer{}, done: make(chan struct{})}
	cmd.Env = append(append(os.Environ(), env...), cmd.Env...) // the test's own entries win
	cmd.Stdout, cmd.Stderr = c.out, c.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", cmd.Path, err)
	}
	go func() { cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.done
	})
	return c
}

func (c *client) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

var slowestCall = regexp.MustCompile(`slowest call: (\d+) us`)

// scenario is the test every client passes (over the HTTP feed or the
// socket, as overHTTP says): its state answered over A2S
// and SAGL; pings keeping the feed live past stale_after; queryd stopped
// and started again under it, and the state answered again; queryd frozen
// (SIGSTOP) for 3 s while the game's frame loop goes on, and the state
// answered after; errors reported while queryd was down; no feed call
// taking long in the frame loop.
func scenario(t *testing.T, d *daemon, cmd *exec.Cmd, overHTTP bool) {
	t.Helper()
	d.Start(t)
	c := startClient(t, cmd, d.env())
	took := d.waitFed(t, c, "first feed", 60*time.Second)
	t.Logf("state answered over A2S and SAGL %v after the client started", took.Round(time.Millisecond))

	time.Sleep(6 * time.Second) // past stale_after (4 s): only the client's pings (every 1 s) keep queryd answering
	if s, err := d.ask(); err != nil || !s.fed() {
		t.Fatalf("6 s after the state (stale_after 4 s) queryd does not answer it: %v %v (does the client ping?)\nclient output:\n%s", s, err, c.out)
	}

	d.Stop()
	time.Sleep(1500 * time.Millisecond) // the client finds queryd gone and backs off
	d.Start(t)
	took = d.waitFed(t, c, "after queryd restarted", 30*time.Second)
	t.Logf("after queryd restarted, the client's state answered again %v after the start", took.Round(time.Millisecond))

	// queryd frozen (SIGSTOP): connections accept, but nothing answers. The
	// game's frame loop must go on (it prints a line every 30 frames).
	before := strings.Count(c.out.String(), "slowest call")
	d.Signal(t, syscall.SIGSTOP)
	time.Sleep(3 * time.Second)
	during := strings.Count(c.out.String(), "slowest call") - before
	d.Signal(t, syscall.SIGCONT)
	if during < 1 {
		t.Errorf("the client's frame loop printed nothing in the 3 s queryd was frozen: its feed calls block\n%s", c.out)
	}
	took = d.waitFed(t, c, "after queryd was frozen for 3 s", 30*time.Second)
	t.Logf("queryd frozen for 3 s: the frame loop printed %d lines meanwhile; the state answered %v after SIGCONT", during, took.Round(time.Millisecond))
	if c.exited() {
		t.Fatalf("the client exited:\n%s", c.out)
	}
	if n := d.httpAnswers(t); overHTTP != (n > 0) {
		t.Errorf("the HTTP feed answered %.0f requests since the restart; the client should feed over %s", n, map[bool]string{true: "HTTP", false: "the socket"}[overHTTP])
	}
	out := c.out.String()
	if !strings.Contains(out, "feed error:") {
		t.Errorf("the client reported no error while queryd was down (its error callback):\n%s", out)
	}
	m := slowestCall.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		t.Fatalf("the client printed no \"slowest call\" line:\n%s", out)
	}
	us, _ := strconv.Atoi(m[len(m)-1][1])
	t.Logf("slowest feed call in the frame loop, queryd restart included: %d µs", us)
	// A blocking call would wait for queryd's restart or for a 5 s timeout
	// while it was frozen; 1 s leaves room for a loaded machine (and Mono's
	// JIT) without hiding that.
	if us > 1000000 {
		t.Errorf("a feed call took %d µs in the game's frame loop: it must not block", us)
	}
}

// need returns the path of tool, or skips the test naming it; under
// -short it skips (every client test runs for many seconds).
func need(t *testing.T, tool, why string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: a real client for many seconds: -short", why)
	}
	p, err := exec.LookPath(tool)
	if err != nil && os.Getenv("QUERYD_REQUIRE_CLIENT_TOOLS") != "" {
		t.Fatalf("%s is not installed, and QUERYD_REQUIRE_CLIENT_TOOLS (.ci/run) requires it: %s", tool, why)
	}
	if err != nil {
		t.Skipf("%s is not installed: %s not tested (.ci/run installs it)", tool, why)
	}
	return p
}

// run runs a build step and fails the test with its output.
func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

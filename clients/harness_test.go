// Package clients_test runs the game-engine feed clients (clients/cpp,
// clients/csharp, clients/godot) against a live queryd: each client's
// example feeds a state with non-ASCII names, a player joining and one
// leaving, and a score change; A2S and SAGL must answer that state. Then
// queryd is stopped and started again under the running client, which must
// reconnect and send the state again on its own. A test skips, saying
// which tool is missing, when the compiler or engine is not installed
// (.ci/run installs them).
package clients_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
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

var (
	buildOnce sync.Once
	querydBin string
	buildErr  error
)

// queryd builds cmd/queryd once for all the tests.
func querydBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "queryd-clients-")
		if err != nil {
			buildErr = err
			return
		}
		querydBin = filepath.Join(dir, "queryd")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", querydBin, "../cmd/queryd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ../cmd/queryd: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return querydBin
}

// daemon is a queryd process on fixed loopback ports, so that it can be
// stopped and started again at the same addresses.
type daemon struct {
	bin, dir, config         string
	udp, http, socket, admin string
	cmd                      *exec.Cmd
	log                      *lockedBuffer
	done                     chan struct{}
	started                  bool // once it has: later starts keep the ports
}

func newDaemon(t *testing.T) *daemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "qc") // short: a Unix socket path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := &daemon{bin: querydBinary(t), dir: dir, config: filepath.Join(dir, "queryd.toml"), socket: filepath.Join(dir, "feed.sock")}
	if err := os.WriteFile(filepath.Join(dir, "feed.token"), []byte(feedToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.pickPorts(t)
	t.Cleanup(d.stop)
	return d
}

// pickPorts chooses free loopback ports and writes the config with them.
func (d *daemon) pickPorts(t *testing.T) {
	t.Helper()
	d.udp = fmt.Sprintf("127.0.0.1:%d", freePort(t, "udp"))
	d.http = fmt.Sprintf("127.0.0.1:%d", freePort(t, "tcp"))
	d.admin = fmt.Sprintf("127.0.0.1:%d", freePort(t, "tcp"))
	cfg := fmt.Sprintf(`[listen]
udp = [%q]
workers = 1
[feed]
socket = %q
stale_after = "4s"
http = %q
http_token_file = %q
[admin]
listen = %q
[server]
name = "config name"
map = "config_map"
max_players = 10
[a2s]
enabled = true
[sagl]
enabled = true
`, d.udp, d.socket, d.http, filepath.Join(d.dir, "feed.token"), d.admin)
	if err := os.WriteFile(d.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// start runs queryd and waits until its feed socket and HTTP feed accept.
// On its first start, a port taken meanwhile by another process (other
// tests run beside these) makes it pick new ones, up to 3 times.
func (d *daemon) start(t *testing.T) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := d.tryStart()
		if err == nil {
			d.started = true
			return
		}
		if d.started || attempt == 3 || !strings.Contains(d.log.String(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("queryd could not bind (a port was taken meanwhile); new ports: %v", err)
		d.pickPorts(t)
	}
}

func (d *daemon) tryStart() error {
	d.log = &lockedBuffer{}
	d.cmd = exec.Command(d.bin, "-config", d.config)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		return err
	}
	cmd, done := d.cmd, make(chan struct{})
	d.done = done
	go func() { cmd.Wait(); close(done) }()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("unix", d.socket); err == nil {
			c.Close()
			if c, err := net.Dial("tcp", d.http); err == nil {
				c.Close()
				return nil
			}
		}
		select {
		case <-d.done:
			d.cmd = nil
			return fmt.Errorf("queryd exited at start:\n%s", d.log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("queryd not listening within 15 s:\n%s", d.log)
		}
	}
}

// stop ends queryd with SIGTERM (SIGKILL after 10 s).
func (d *daemon) stop() {
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
	}
	d.cmd = nil
}

// httpAnswers returns how many 200s the HTTP feed has answered since
// queryd started (queryd_feed_http_responses_total{code="200"}).
func (d *daemon) httpAnswers(t *testing.T) int {
	t.Helper()
	return d.metric(t, `queryd_feed_http_responses_total{code="200"}`)
}

// metric returns the value of one series on the admin endpoint's /metrics.
func (d *daemon) metric(t *testing.T, series string) int {
	t.Helper()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + d.admin + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatalf("/metrics has no %s", series)
	return 0
}

// env is the examples' environment: where and how to feed.
func (d *daemon) env() []string {
	return []string{
		"QUERYD_FEED_SOCKET=" + d.socket,
		"QUERYD_FEED_HTTP=http://" + d.http,
		"QUERYD_FEED_TOKEN=" + feedToken,
		"QUERYD_FEED_PING=1",
		"QUERYD_EXAMPLE_SECONDS=120",
	}
}

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
	ac, err := a2s.Dial(d.udp)
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
	sc, err := sagl.Dial(d.udp)
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
	t.Fatalf("%s: queryd does not answer the client's state within %v: %v (%v)\nclient output:\n%s\nqueryd log:\n%s", what, limit, last, lastErr, c.out, d.log)
	return 0
}

// client is a running client example.
type client struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
}

func startClient(t *testing.T, cmd *exec.Cmd, env []string) *client {
	t.Helper()
	c := &client{cmd: cmd, out: &lockedBuffer{}, done: make(chan struct{})}
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
	d.start(t)
	c := startClient(t, cmd, d.env())
	took := d.waitFed(t, c, "first feed", 60*time.Second)
	t.Logf("state answered over A2S and SAGL %v after the client started", took.Round(time.Millisecond))

	time.Sleep(6 * time.Second) // past stale_after (4 s): only the client's pings (every 1 s) keep queryd answering
	if s, err := d.ask(); err != nil || !s.fed() {
		t.Fatalf("6 s after the state (stale_after 4 s) queryd does not answer it: %v %v (does the client ping?)\nclient output:\n%s", s, err, c.out)
	}

	d.stop()
	time.Sleep(1500 * time.Millisecond) // the client finds queryd gone and backs off
	d.start(t)
	took = d.waitFed(t, c, "after queryd restarted", 30*time.Second)
	t.Logf("after queryd restarted, the client's state answered again %v after the start", took.Round(time.Millisecond))

	// queryd frozen (SIGSTOP): connections accept, but nothing answers. The
	// game's frame loop must go on (it prints a line every 30 frames).
	before := strings.Count(c.out.String(), "slowest call")
	d.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(3 * time.Second)
	during := strings.Count(c.out.String(), "slowest call") - before
	d.cmd.Process.Signal(syscall.SIGCONT)
	if during < 1 {
		t.Errorf("the client's frame loop printed nothing in the 3 s queryd was frozen: its feed calls block\n%s", c.out)
	}
	took = d.waitFed(t, c, "after queryd was frozen for 3 s", 30*time.Second)
	t.Logf("queryd frozen for 3 s: the frame loop printed %d lines meanwhile; the state answered %v after SIGCONT", during, took.Round(time.Millisecond))
	if c.exited() {
		t.Fatalf("the client exited:\n%s", c.out)
	}
	if n := d.httpAnswers(t); overHTTP != (n > 0) {
		t.Errorf("the HTTP feed answered %d requests since the restart; the client should feed over %s", n, map[bool]string{true: "HTTP", false: "the socket"}[overHTTP])
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

// need returns the path of tool, or skips the test naming it.
func need(t *testing.T, tool, why string) string {
	t.Helper()
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

func freePort(t *testing.T, network string) int {
	t.Helper()
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var _ io.Writer = (*lockedBuffer)(nil)

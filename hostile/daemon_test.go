package hostile

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/netnstest"
)

var (
	flagRace = flag.Bool("hostile.race", true, "build the daemon with the race detector (false: measure RSS without its shadow memory)")
	flagBin  = flag.String("hostile.bin", "", "use this queryd binary instead of building one (with -hostile.race=false if it is not race-enabled)")
)

// querydBin is the daemon binary TestMain builds once.
var querydBin string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

// runMain builds the daemon (unless -hostile.bin names one) and runs the tests.
func runMain(m *testing.M) int {
	if *flagBin != "" {
		querydBin = *flagBin
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "queryd-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	querydBin = filepath.Join(dir, "queryd")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := []string{"build", "-o", querydBin, "./cmd/queryd"}
	if *flagRace {
		args = []string{"build", "-race", "-o", querydBin, "./cmd/queryd"}
	}
	build := exec.CommandContext(ctx, "go", args...)
	build.Dir = ".." // the module root, from this package's directory
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "hostile: go", strings.Join(args, " "), ":", err)
		return 1
	}
	return m.Run()
}

// Tables are TOML tables by name; a key set to nil is removed.
type Tables map[string]map[string]any

// Daemon is one queryd subprocess on free loopback ports.
type Daemon struct {
	UDPAddr    string // "127.0.0.1:PORT"
	AdminAddr  string // "127.0.0.1:PORT"
	Socket     string // feed socket path
	ConfigPath string
	Dir        string
	Env        []string // extra environment for the daemon ("NAME=value"; a later entry wins)
	// NoFile, when set before Start, is the daemon's file-descriptor limit
	// (soft and hard, so that the Go runtime cannot raise it).
	NoFile int
	// Netns, when set before Start, is the network namespace the daemon
	// runs in (ip netns exec); its admin endpoint is reached from there.
	Netns string
	// Bin, when set before Start, is the daemon binary to run instead of
	// the race-enabled one (plainBin: for latency figures).
	Bin string

	t       testing.TB
	cmd     *exec.Cmd
	stderr  *logBuffer
	exited  chan struct{}
	waitErr error
	stopped bool
}

// baseTables is the config every test daemon starts from: loopback ports,
// every protocol on, the default budgets, one socket worker.
func baseTables(d *Daemon) Tables {
	return Tables{
		"listen":   {"udp": []string{d.UDPAddr}},
		"feed":     {"socket": d.Socket, "stale_after": "60s"},
		"admin":    {"listen": d.AdminAddr},
		"log":      {"level": "info", "format": "text"},
		"a2s":      {"enabled": true},
		"gamespy4": {"enabled": true},
		"sagl":     {"enabled": true},
		"quake3":   {"enabled": true},
		"bedrock":  {"enabled": true},
		"sqp":      {"enabled": true},
	}
}

// baseServer is the [server] document of every test daemon.
func baseServer() map[string]any {
	return map[string]any{
		"name": "hostile test", "map": "arena", "game": "Hostile", "folder": "hostile",
		"version": "1.0.0", "max_players": 16,
		"players": map[string]any{
			"1": map[string]any{"name": "Alice", "score": 3, "ping": 40},
			"2": map[string]any{"name": "Bob", "score": 5, "ping": 60},
		},
		"rules": map[string]any{"mp_timelimit": "30"},
	}
}

// newDaemon prepares a daemon (ports, paths, config file) without starting it.
func newDaemon(t testing.TB, over Tables) *Daemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "qh") // short: Unix socket paths must stay < 100 bytes
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := &Daemon{
		t:          t,
		Dir:        dir,
		UDPAddr:    fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t)),
		AdminAddr:  fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t)),
		Socket:     filepath.Join(dir, "feed.sock"),
		ConfigPath: filepath.Join(dir, "queryd.toml"),
	}
	d.WriteConfig(t, over)
	return d
}

// StartDaemon starts queryd on the base config with over laid on top, waits
// until it is ready, and stops it (asserting a clean exit) when t ends.
func StartDaemon(t testing.TB, over Tables) *Daemon {
	t.Helper()
	d := newDaemon(t, over)
	d.Start(t)
	return d
}

// WriteConfig writes the daemon's config file: the base tables with over on
// top (over["server"] sets fields of the base [server] document).
func (d *Daemon) WriteConfig(t testing.TB, over Tables) {
	t.Helper()
	tables := baseTables(d)
	server := baseServer()
	for name, keys := range over {
		if name == "server" {
			for k, v := range keys {
				server[k] = v
			}
			continue
		}
		if tables[name] == nil {
			tables[name] = map[string]any{}
		}
		for k, v := range keys {
			if v == nil {
				delete(tables[name], k)
				continue
			}
			tables[name][k] = v
		}
	}
	doc := map[string]any{"server": server}
	for name, keys := range tables {
		doc[name] = keys
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		t.Fatalf("encoding the config: %v", err)
	}
	if err := os.WriteFile(d.ConfigPath, buf.Bytes(), 0o600); err != nil {
		t.Fatalf("writing the config: %v", err)
	}
}

// Start runs the daemon and waits until /healthz answers and the feed socket
// exists; it registers Stop with t.Cleanup.
func (d *Daemon) Start(t testing.TB) {
	t.Helper()
	d.t = t
	d.stopped = false
	d.exited = make(chan struct{})
	d.stderr = &logBuffer{}
	name, args := querydBin, []string{"-config", d.ConfigPath}
	if d.Bin != "" {
		name = d.Bin
	}
	if d.NoFile > 0 {
		// The shell sets the limit and execs queryd (same pid).
		name, args = "sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, d.NoFile), name}, args...)
	}
	if d.Netns != "" {
		// ip execs the daemon (same pid) inside the namespace.
		name, args = "ip", append([]string{"netns", "exec", d.Netns, name}, args...)
	}
	d.cmd = exec.Command(name, args...)
	// The race runtime sleeps 1 s at exit unless told not to; races are
	// still reported (and make the exit status non-zero) as they happen.
	d.cmd.Env = append(append(os.Environ(), "GORACE=atexit_sleep_ms=0"), d.Env...)
	d.cmd.Stdout = d.stderr
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("starting queryd: %v", err)
	}
	go func() {
		d.waitErr = d.cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(func() {
		d.Stop()
		if t.Failed() {
			t.Logf("queryd output:\n%s", d.stderr.String())
		}
	})
	d.waitReady(t, 15*time.Second)
}

// Pid is the daemon's process id.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Output is what the daemon has written to stderr and stdout so far.
func (d *Daemon) Output() string { return d.stderr.String() }

// Exited reports whether the daemon process has ended.
func (d *Daemon) Exited() bool {
	select {
	case <-d.exited:
		return true
	default:
		return false
	}
}

// waitReady polls until the daemon is ready (see Start) or fails the test.
func (d *Daemon) waitReady(t testing.TB, limit time.Duration) {
	t.Helper()
	client := d.httpClient(time.Second)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if d.Exited() {
			t.Fatalf("queryd exited before it was ready: %v\n%s", d.waitErr, d.Output())
		}
		resp, err := client.Get("http://" + d.AdminAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
			_, err = os.Stat(d.Socket)
		}
		if err == nil && strings.Contains(d.Output(), "queryd started") {
			return
		}
		time.Sleep(30 * time.Millisecond)
	}
	t.Fatalf("queryd not ready within %v:\n%s", limit, d.Output())
}

// httpClient is a client for the daemon's admin endpoint, connecting from
// inside the daemon's network namespace when it runs in one.
func (d *Daemon) httpClient(timeout time.Duration) *http.Client {
	if d.Netns != "" {
		return netnstest.HTTPClient(d.Netns, timeout)
	}
	return &http.Client{Timeout: timeout}
}

// Signal sends sig to the daemon.
func (d *Daemon) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := d.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to queryd: %v", sig, err)
	}
}

// Terminate sends SIGTERM and returns how long the daemon took to exit and
// its exit error; it fails the test when it takes more than limit.
func (d *Daemon) Terminate(t testing.TB, limit time.Duration) (time.Duration, error) {
	t.Helper()
	d.stopped = true
	start := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !d.Exited() {
		t.Errorf("SIGTERM to queryd: %v", err)
	}
	select {
	case <-d.exited:
		return time.Since(start), d.waitErr
	case <-time.After(limit):
		d.cmd.Process.Kill()
		<-d.exited
		t.Errorf("queryd did not exit within %v of SIGTERM; killed it", limit)
		return time.Since(start), d.waitErr
	}
}

// Stop sends SIGTERM (once) and asserts a clean exit within 2 s with the feed
// socket removed. A race report makes the race-built daemon exit non-zero.
func (d *Daemon) Stop() {
	if d.stopped {
		return
	}
	t := d.t
	if d.Exited() {
		d.stopped = true
		t.Errorf("queryd exited on its own: %v", d.waitErr)
		return
	}
	if _, err := d.Terminate(t, 2*time.Second); err != nil {
		t.Errorf("queryd exit after SIGTERM: %v (want status 0)", err)
	}
	if _, err := os.Lstat(d.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("feed socket %s still there after exit (stat: %v)", d.Socket, err)
	}
	if strings.Contains(d.Output(), "WARNING: DATA RACE") {
		t.Errorf("the race detector reported a data race in queryd")
	}
	// The responder recovers a panic while serving a datagram and goes on;
	// for this suite it is still a bug, as a crash was before.
	if strings.Contains(d.Output(), "panic while serving a datagram") {
		t.Errorf("queryd recovered a panic while serving a datagram (see its output)")
	}
}

// Feed dials the feed socket; the connection closes when t ends.
func (d *Daemon) Feed(t testing.TB) *feed.Client {
	t.Helper()
	c, err := feed.Dial(d.Socket)
	if err != nil {
		t.Fatalf("feed: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// RSS returns the daemon's resident set size and its peak (VmRSS, VmHWM) in bytes.
func (d *Daemon) RSS(t testing.TB) (rss, peak int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.Pid()))
	if err != nil {
		t.Fatalf("reading /proc status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = n << 10
		case "VmHWM:":
			peak = n << 10
		}
	}
	return rss, peak
}

// logBuffer collects a subprocess's output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// freeUDPPort returns a UDP port on 127.0.0.1 that was free a moment ago.
func freeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free UDP port: %v", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// freeTCPPort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freeTCPPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free TCP port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

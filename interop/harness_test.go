package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/netnstest"
)

// querydBin is the race-enabled daemon binary TestMain builds once.
var querydBin string

// Protocols are the protocol tables a test config can enable. Every one a
// test does not list in Options.Protocols is written with enabled = false.
var Protocols = []string{"a2s", "gamespy4", "sagl", "quake3"}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "queryd-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	querydBin = filepath.Join(dir, "queryd")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Built inside the main module (its go.mod and go.sum), as users build it.
	build := exec.CommandContext(ctx, "go", "build", "-race", "-o", querydBin, "./cmd/queryd")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "interop: building the daemon with -race:", err)
		return 1
	}
	return m.Run()
}

// Options choose what a test daemon serves. The zero value serves nothing
// but the feed: list the protocols a test needs.
type Options struct {
	// Protocols maps each protocol table to enable ("a2s", "gamespy4", "sagl",
	// "quake3") to its keys besides enabled (nil for none). A key may hold
	// a []map[string]any for an array of tables, e.g. quake3's "masters".
	Protocols map[string]map[string]any
	// Tables holds keys of any other table ("limits", "feed", "relay", …),
	// laid over the harness's own; a key set to nil removes it.
	Tables map[string]map[string]any
	// Server is the [server] base document; nil writes a small one.
	Server map[string]any
	// Netns, when set, runs the daemon in that network namespace (ip
	// netns exec); its admin endpoint is reached from inside it.
	Netns string
	// UDPAddr is the [listen] udp address; "" takes a free port on
	// 127.0.0.1.
	UDPAddr string
}

// Daemon is one queryd subprocess on free loopback ports.
type Daemon struct {
	UDPAddr    string // "127.0.0.1:PORT"
	UDPPort    int
	AdminAddr  string // "127.0.0.1:PORT"
	Socket     string // feed socket path
	ConfigPath string

	t       testing.TB
	netns   string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	stopped bool
}

// StartDaemon writes a config for opts, starts queryd on it, waits until it
// answers /healthz, and stops it (asserting a clean exit) when t ends.
func StartDaemon(t testing.TB, opts Options) *Daemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "qd") // short: Unix socket paths must stay < 108 bytes
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := &Daemon{
		t:          t,
		UDPPort:    freeUDPPort(t),
		AdminAddr:  fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t)),
		Socket:     filepath.Join(dir, "feed.sock"),
		ConfigPath: filepath.Join(dir, "queryd.toml"),
		exited:     make(chan struct{}),
	}
	d.UDPAddr = fmt.Sprintf("127.0.0.1:%d", d.UDPPort)
	if opts.UDPAddr != "" {
		ap, err := netip.ParseAddrPort(opts.UDPAddr)
		if err != nil {
			t.Fatalf("Options.UDPAddr: %v", err)
		}
		d.UDPAddr, d.UDPPort = opts.UDPAddr, int(ap.Port())
	}
	d.netns = opts.Netns
	cfg := d.configText(t, opts)
	if err := os.WriteFile(d.ConfigPath, cfg, 0o600); err != nil {
		t.Fatalf("writing the config: %v", err)
	}
	d.start(t)
	t.Cleanup(d.Stop)
	d.waitReady(t, 10*time.Second)
	return d
}

// configText renders the TOML config: loopback ports, the feed socket,
// generous budgets (tests share 127.0.0.1), and opts laid on top.
func (d *Daemon) configText(t testing.TB, opts Options) []byte {
	t.Helper()
	tables := map[string]map[string]any{
		"listen": {"udp": []string{d.UDPAddr}, "workers": 1},
		"feed":   {"socket": d.Socket, "stale_after": "60s"},
		"limits": {
			"per_ip_rate": "64MiB", "per_ip_burst": "16MiB",
			"unproven_rate": "64MiB", "unproven_burst": "16MiB",
		},
		"admin": {"listen": d.AdminAddr},
		"log":   {"level": "info", "format": "text"},
	}
	for _, p := range Protocols {
		tables[p] = map[string]any{"enabled": false}
	}
	for p, keys := range opts.Protocols {
		tables[p] = map[string]any{"enabled": true}
		for k, v := range keys {
			tables[p][k] = v
		}
	}
	for name, keys := range opts.Tables {
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
	server := opts.Server
	if server == nil {
		server = map[string]any{"name": "queryd interop", "map": "interop_map", "max_players": 8}
	}
	doc := map[string]any{"server": server}
	for name, keys := range tables {
		doc[name] = keys
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		t.Fatalf("encoding the config: %v", err)
	}
	return buf.Bytes()
}

func (d *Daemon) start(t testing.TB) {
	t.Helper()
	name, args := querydBin, []string{"-config", d.ConfigPath}
	if d.netns != "" {
		// ip execs the daemon (same pid) inside the namespace.
		name, args = "ip", append([]string{"netns", "exec", d.netns, name}, args...)
	}
	d.cmd = exec.Command(name, args...)
	d.cmd.Stdin = nil
	// The race runtime sleeps 1 s at exit unless told not to (on a loaded
	// machine that passed Stop's 2 s); races are still reported, and make
	// the exit status non-zero, as they happen.
	d.cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	d.cmd.Stdout = &lineLogger{t: t, prefix: "queryd stdout: "}
	d.cmd.Stderr = &lineLogger{t: t, prefix: "queryd: "}
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("starting queryd: %v", err)
	}
	go func() {
		d.waitErr = d.cmd.Wait()
		close(d.exited)
	}()
}

// waitReady polls /healthz until the daemon answers (the admin listener
// starts after the UDP sockets and the feed), or fails the test.
func (d *Daemon) waitReady(t testing.TB, limit time.Duration) {
	t.Helper()
	client := d.httpClient(time.Second)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-d.exited:
			t.Fatalf("queryd exited before it was ready: %v (config:\n%s)", d.waitErr, d.configFile())
		default:
		}
		resp, err := client.Get("http://" + d.AdminAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if _, err := os.Stat(d.Socket); err == nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("queryd not ready within %v (config:\n%s)", limit, d.configFile())
}

// httpClient is a client for the daemon's admin endpoint, connecting from
// inside the daemon's network namespace when it runs in one.
func (d *Daemon) httpClient(timeout time.Duration) *http.Client {
	if d.netns != "" {
		return netnstest.HTTPClient(d.netns, timeout)
	}
	return &http.Client{Timeout: timeout}
}

func (d *Daemon) configFile() string {
	b, _ := os.ReadFile(d.ConfigPath)
	return string(b)
}

// Stop sends SIGTERM and asserts that queryd exits with status 0 within 2 s
// (a race report makes the race-enabled binary exit non-zero) and that it
// removed its feed socket. It runs at most once; t.Cleanup calls it.
func (d *Daemon) Stop() {
	t := d.t
	if d.stopped {
		return
	}
	d.stopped = true
	select {
	case <-d.exited:
		t.Errorf("queryd exited on its own before the test stopped it: %v", d.waitErr)
		return
	default:
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM to queryd: %v", err)
	}
	select {
	case <-d.exited:
	case <-time.After(2 * time.Second):
		t.Errorf("queryd did not exit within 2 s of SIGTERM; killing it")
		d.cmd.Process.Kill()
		<-d.exited
		return
	}
	if d.waitErr != nil {
		t.Errorf("queryd exit after SIGTERM: %v (want status 0)", d.waitErr)
	}
	if _, err := os.Lstat(d.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("feed socket %s still there after exit (stat: %v)", d.Socket, err)
	}
}

// Feed dials the daemon's feed socket; the connection closes when t ends.
func (d *Daemon) Feed(t testing.TB) *feed.Client {
	t.Helper()
	c, err := feed.Dial(d.Socket)
	if err != nil {
		t.Fatalf("feed: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Replace feeds a whole state document on a fresh connection and returns
// the new state version.
func (d *Daemon) Replace(t testing.TB, doc any) uint64 {
	t.Helper()
	v, err := d.Feed(t).Replace(doc)
	if err != nil {
		t.Fatalf("feed replace: %v", err)
	}
	return v
}

// Patch feeds a merge patch on a fresh connection and returns the new version.
func (d *Daemon) Patch(t testing.TB, patch any) uint64 {
	t.Helper()
	v, err := d.Feed(t).Patch(patch)
	if err != nil {
		t.Fatalf("feed patch: %v", err)
	}
	return v
}

// lineLogger writes each complete line it is given to the test log.
type lineLogger struct {
	t      testing.TB
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.t.Log(l.prefix + string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
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

// CmdResult is what an external command did.
type CmdResult struct {
	Stdout, Stderr string
	Err            error // nil on exit status 0
}

// RunCmd runs an external command with a time limit, from dir ("" for the
// test's directory), and logs its command line and stderr.
func RunCmd(t testing.TB, limit time.Duration, dir, name string, args ...string) CmdResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdin = nil
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t.Logf("running %s %s", name, strings.Join(args, " "))
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s: no exit within %v: %w", name, limit, ctx.Err())
	} else if err != nil {
		err = fmt.Errorf("%s: %w", name, err)
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Logf("%s stderr:\n%s", name, s)
	}
	return CmdResult{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// NeedCommand fails the test (it never skips: a missing client is a broken
// setup) when name is not on PATH; .ci/run installs the clients.
func NeedCommand(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (.ci/run installs it): %v", name, err)
	}
	return p
}

// nodeDir is the Node project with the npm clients (npm ci installs them).
const nodeDir = "node"

// RunNode runs node on a script in interop/node with a time limit.
func RunNode(t testing.TB, limit time.Duration, script string, args ...string) CmdResult {
	t.Helper()
	NeedCommand(t, "node")
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules")); err != nil {
		t.Fatalf("interop/node/node_modules is missing: run `npm ci` in interop/node (.ci/run does): %v", err)
	}
	return RunCmd(t, limit, nodeDir, "node", append([]string{script}, args...)...)
}

// RunGamedig asks the server with gamedig (interop/node/gamedig.mjs) and
// returns its JSON result. typ is a gamedig game id or protocol name;
// options (may be nil) are merged over the script's defaults.
func RunGamedig(t testing.TB, typ, addr string, options map[string]any) CmdResult {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("gamedig address %q: %v", addr, err)
	}
	args := []string{typ, host, port}
	if options != nil {
		b, err := json.Marshal(options)
		if err != nil {
			t.Fatalf("gamedig options: %v", err)
		}
		args = append(args, string(b))
	}
	return RunNode(t, 60*time.Second, "gamedig.mjs", args...)
}

package querydtest

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/netnstest"
	"github.com/queryd/queryd/internal/testkit"
)

// Daemon is one queryd process on free loopback ports. The fields that
// say how it runs (Bin, Env, NoFile, Netns, StopLimit) are read by Start.
type Daemon struct {
	Bin          string   // the queryd binary
	UDPAddr      string   // "127.0.0.1:PORT": [listen] udp
	AdminAddr    string   // "127.0.0.1:PORT": [admin] listen
	FeedHTTPAddr string   // "127.0.0.1:PORT", free for [feed] http: in the config only where a layer puts it
	Socket       string   // the feed socket's path
	ConfigPath   string   // the config file
	Dir          string   // the daemon's folder (config, feed socket), removed when the test ends
	Env          []string // extra environment ("NAME=value"; a later entry wins)
	// NoFile, when set, is the daemon's file-descriptor limit (soft and
	// hard, so that the Go runtime cannot raise it).
	NoFile int
	// Netns, when set, is the network namespace the daemon runs in (ip
	// netns exec); its admin endpoint is reached from inside it.
	Netns string
	// StopLimit is how long Stop waits for the daemon to exit after
	// SIGTERM before it kills it and fails the test; 0 is 2 s.
	StopLimit time.Duration

	t              testing.TB
	layers         []Tables
	socketInConfig bool
	cmd            *exec.Cmd
	out            *testkit.Buffer
	exited         chan struct{}
	waitErr        error
	stopped        bool
	started        bool // it has been ready once: a later start keeps the ports
	cleanup        bool // Stop is registered with t.Cleanup
}

// New prepares a daemon of bin in a fresh folder, on free ports, with
// its config (Base with layers on top) written; Start starts it.
func New(t testing.TB, bin string, layers ...Tables) *Daemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "qd") // short: a Unix socket path must stay under 108 bytes
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := &Daemon{
		t:          t,
		Bin:        bin,
		Dir:        dir,
		Socket:     filepath.Join(dir, "feed.sock"),
		ConfigPath: filepath.Join(dir, "queryd.toml"),
		stopped:    true,
	}
	d.pickPorts(t)
	d.WriteConfig(t, layers...)
	return d
}

// Start runs bin with layers on top of Base and waits until it is ready
// (see Start); the daemon stops when t ends.
func Start(t testing.TB, bin string, layers ...Tables) *Daemon {
	t.Helper()
	d := New(t, bin, layers...)
	d.Start(t)
	return d
}

// pickPorts chooses the daemon's free loopback ports.
func (d *Daemon) pickPorts(t testing.TB) {
	d.UDPAddr = testkit.FreeUDPAddr(t)
	d.AdminAddr = testkit.FreeTCPAddr(t)
	d.FeedHTTPAddr = testkit.FreeTCPAddr(t)
}

// Start runs the daemon on its config and waits until it is ready: its
// /healthz answers, its feed socket exists (when the config has it) and
// it has logged "queryd started". The first Start registers Stop with
// t.Cleanup; a stopped daemon may be started again, on the same ports.
// When the first start finds a port taken meanwhile (other tests run
// beside), it picks new ones, up to 3 times.
func (d *Daemon) Start(t testing.TB) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := d.tryStart(t)
		if err == nil {
			return
		}
		if d.started || attempt == 3 || !strings.Contains(d.Output(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("queryd could not bind (a port was taken meanwhile); new ports: %v", err)
		d.repick(t)
	}
}

// tryStart runs the daemon once and waits for it to be ready.
func (d *Daemon) tryStart(t testing.TB) error {
	t.Helper()
	d.t = t
	d.stopped = false
	d.exited = make(chan struct{})
	d.out = &testkit.Buffer{}
	name, args := d.Bin, []string{"-config", d.ConfigPath}
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
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		d.stopped = true
		return fmt.Errorf("starting queryd: %w", err)
	}
	cmd, exited := d.cmd, d.exited
	go func() {
		d.waitErr = cmd.Wait()
		close(exited)
	}()
	if !d.cleanup {
		d.cleanup = true
		t.Cleanup(func() {
			d.Stop()
			if t.Failed() {
				t.Logf("queryd output:\n%s", d.Output())
			}
		})
	}
	if err := d.waitReady(15 * time.Second); err != nil {
		if d.Exited() {
			d.stopped = true
		}
		return err
	}
	d.started = true
	return nil
}

// repick chooses new ports and writes the config again with them in
// place of the old ones, wherever the layers hold them.
func (d *Daemon) repick(t testing.TB) {
	old := []string{d.UDPAddr, d.AdminAddr, d.FeedHTTPAddr}
	d.pickPorts(t)
	now := []string{d.UDPAddr, d.AdminAddr, d.FeedHTTPAddr}
	swap := func(v any) any {
		switch v := v.(type) {
		case string:
			for i := range old {
				if v == old[i] {
					return now[i]
				}
			}
		case []string:
			out := make([]string, len(v))
			for j, s := range v {
				out[j] = s
				for i := range old {
					if s == old[i] {
						out[j] = now[i]
					}
				}
			}
			return out
		}
		return v
	}
	layers := make([]Tables, len(d.layers))
	for i, layer := range d.layers {
		layers[i] = Tables{}
		for name, keys := range layer {
			layers[i][name] = map[string]any{}
			for k, v := range keys {
				layers[i][name][k] = swap(v)
			}
		}
	}
	d.WriteConfig(t, layers...)
}

// waitReady polls until the daemon is ready (see Start).
func (d *Daemon) waitReady(limit time.Duration) error {
	client := d.HTTPClient(time.Second)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if d.Exited() {
			return fmt.Errorf("queryd exited before it was ready: %v\n%s\nconfig:\n%s", d.waitErr, d.Output(), d.ConfigText())
		}
		resp, err := client.Get("http://" + d.AdminAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if d.socketInConfig {
				_, err = os.Stat(d.Socket)
			}
		}
		if err == nil && strings.Contains(d.Output(), "queryd started") {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("queryd not ready within %v:\n%s", limit, d.Output())
}

// HTTPClient is a client for the daemon's admin endpoint, connecting from
// inside the daemon's network namespace when it runs in one.
func (d *Daemon) HTTPClient(timeout time.Duration) *http.Client {
	if d.Netns != "" {
		return netnstest.HTTPClient(d.Netns, timeout)
	}
	return &http.Client{Timeout: timeout}
}

// Pid is the daemon's process id.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Output is what the daemon has written to stderr and stdout since it
// last started.
func (d *Daemon) Output() string {
	if d.out == nil {
		return ""
	}
	return d.out.String()
}

// Exited reports whether the daemon process has ended.
func (d *Daemon) Exited() bool {
	select {
	case <-d.exited:
		return true
	default:
		return false
	}
}

// Signal sends sig to the daemon.
func (d *Daemon) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := d.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to queryd: %v", sig, err)
	}
}

// Terminate sends SIGTERM and returns how long the daemon took to exit and
// its exit error; it fails the test, and kills the daemon, when that takes
// more than limit.
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

// Stop sends SIGTERM (once) and fails the test unless the daemon exits
// within StopLimit with status 0 and its feed socket removed, with no data
// race reported (a race-built daemon) and no panic recovered while serving
// a datagram (the responder recovers one and goes on; for a test it is
// still a bug). It does nothing when the daemon is not running.
func (d *Daemon) Stop() {
	if d.stopped {
		return
	}
	t := d.t
	t.Helper()
	if d.Exited() {
		d.stopped = true
		t.Errorf("queryd exited on its own before the test stopped it: %v", d.waitErr)
		return
	}
	limit := d.StopLimit
	if limit == 0 {
		limit = 2 * time.Second
	}
	if _, err := d.Terminate(t, limit); err != nil {
		t.Errorf("queryd exit after SIGTERM: %v (want status 0)", err)
	}
	if _, err := os.Lstat(d.Socket); d.socketInConfig && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("feed socket %s still there after exit (stat: %v)", d.Socket, err)
	}
	if strings.Contains(d.Output(), "WARNING: DATA RACE") {
		t.Errorf("the race detector reported a data race in queryd")
	}
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

// RSS returns the daemon's resident set size and its peak (VmRSS, VmHWM)
// in bytes, from /proc (Linux).
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

package clients_test

import (
	"bufio"
	"context"
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
)

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
// queryd started (queryd_feed_http_responses_total{code="200",server="main"}).
func (d *daemon) httpAnswers(t *testing.T) int {
	t.Helper()
	return d.metric(t, `queryd_feed_http_responses_total{code="200",server="main"}`)
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

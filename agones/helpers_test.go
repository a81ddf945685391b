package agones

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/state"
)

// sdkServerRel is where Agones' sdk-server (built from Agones' source: no
// registry serves it) lies beside the repository.
const sdkServerRel = "shared/clients/agones-sdk-server/sdk-server"

// needSDKServer returns the sdk-server binary: $QUERYD_AGONES_SDK_SERVER,
// else ../shared/clients/agones-sdk-server/sdk-server from the repository
// or any folder above it. Without it the test is skipped, saying so: the
// repository must build and test without ../shared.
func needSDKServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("SKIP: the real Agones SDK server: -short")
	}
	if p := os.Getenv("QUERYD_AGONES_SDK_SERVER"); p != "" {
		return p
	}
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(filepath.Dir(dir), sdkServerRel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	t.Skipf("SKIP: Agones' sdk-server not found: set QUERYD_AGONES_SDK_SERVER or put it at ../%s beside the repository", sdkServerRel)
	return ""
}

// sdkServer is Agones' real SDK server in local mode (--local -f FILE:
// one GameServer read from a file, no Kubernetes) on loopback ports.
type sdkServer struct {
	t                  *testing.T
	bin, file          string
	http, grpc, health int
	cmd                *exec.Cmd
	log                *bytes.Buffer
	done               chan struct{}
}

// startSDKServer writes gameServer (YAML) to a file and runs the SDK
// server on it, until the test ends.
func startSDKServer(t *testing.T, gameServer string) *sdkServer {
	t.Helper()
	s := &sdkServer{t: t, bin: needSDKServer(t), file: filepath.Join(t.TempDir(), "gameserver.yaml")}
	s.http, s.grpc, s.health = freePort(t), freePort(t), freePort(t)
	s.write(gameServer)
	s.start()
	t.Cleanup(s.kill)
	return s
}

// addr is the SDK server's HTTP address as [agones] sdk names it.
func (s *sdkServer) addr() string { return "localhost:" + strconv.Itoa(s.http) }

// write rewrites the GameServer file in place: the SDK server watches
// the file (its inode, for writes) and reads it again whole, forgetting
// the labels and annotations set through the SDK.
func (s *sdkServer) write(gameServer string) {
	s.t.Helper()
	if err := os.WriteFile(s.file, []byte(gameServer), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

// start runs the SDK server and waits until it answers GET /gameserver.
func (s *sdkServer) start() {
	s.t.Helper()
	s.log = &bytes.Buffer{}
	s.cmd = exec.Command(s.bin, "--local", "-f", s.file,
		"--http-port", strconv.Itoa(s.http), "--grpc-port", strconv.Itoa(s.grpc), "--health-port", strconv.Itoa(s.health))
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.done = make(chan struct{})
	go func() { s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + s.addr() + "/gameserver"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-s.done:
			s.t.Fatalf("sdk-server exited: %s", s.log)
		case <-time.After(50 * time.Millisecond):
		}
	}
	s.t.Fatalf("sdk-server did not answer in 15s: %s", s.log)
}

// kill ends the SDK server at once (SIGKILL), as a crash would.
func (s *sdkServer) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// call sends one REST SDK request as a game would, and fails the test
// unless it is answered 200.
func (s *sdkServer) call(method, path, body string) {
	s.t.Helper()
	req, err := http.NewRequest(method, "http://"+s.addr()+path, bytes.NewBufferString(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("%s %s %s: %s %s", method, path, body, resp.Status, b)
	}
}

// freePort returns a TCP port free on loopback now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// harness runs a Watcher that publishes into a real state.Store, as the
// daemon will.
type harness struct {
	t     *testing.T
	w     *Watcher
	store *state.Store
	reg   *prometheus.Registry
	cfg   *Config

	mu      sync.Mutex
	changes []time.Time // when each document or class change happened
	logs    *syncBuffer
}

// watch starts a watcher of sdk with cfg's other settings (nil: the
// defaults) until the test ends.
func watch(t *testing.T, sdk string, cfg *Config) *harness {
	t.Helper()
	if cfg == nil {
		cfg = NewConfig()
	}
	cfg.SDK = sdk
	store, err := state.NewStore(map[string]any{"name": "base"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, store: store, reg: prometheus.NewRegistry(), cfg: cfg, logs: &syncBuffer{}}
	h.w, err = New(cfg, Options{
		Publish: func(doc map[string]any) error {
			_, err := store.SetUpstream(doc)
			return err
		},
		Changed: func() {
			h.mu.Lock()
			h.changes = append(h.changes, time.Now())
			h.mu.Unlock()
		},
		Logger:   slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registry: h.reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.w.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return 10s after its context ended")
		}
		if t.Failed() {
			t.Logf("watcher log:\n%s", h.logs)
		}
	})
	return h
}

// until waits up to within for cond to hold on the watcher's status and
// the store's snapshot, and returns how long that took; it fails the test
// when it does not hold in time.
func (h *harness) until(within time.Duration, what string, cond func(Status, *state.Snapshot) bool) time.Duration {
	h.t.Helper()
	start := time.Now()
	for {
		if cond(h.w.Status(), h.store.Snapshot()) {
			return time.Since(start)
		}
		if time.Since(start) > within {
			s := h.w.Status()
			h.t.Fatalf("%s: not within %s: status %+v, document %v", what, within, s, h.w.Doc())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// reads returns queryd_agones_reads_total{source, outcome}.
func (h *harness) reads(source, outcome string) float64 {
	return h.metric("queryd_agones_reads_total", "source", source, "outcome", outcome)
}

// metric returns the value of the series of name with the label pairs
// given (a counter or a gauge; 0 when there is none).
func (h *harness) metric(name string, labels ...string) float64 {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, l := range m.GetLabel() {
					found = found || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
				}
				if !found {
					continue series
				}
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// names returns the snapshot's player names in order.
func names(s *state.Snapshot) []string {
	out := []string{}
	for _, p := range s.Players {
		out = append(out, p.Name)
	}
	return out
}

// ruleValue returns the snapshot's rule k ("" when absent).
func ruleValue(s *state.Snapshot, k string) string {
	for _, r := range s.Rules {
		if r.Key == k {
			return r.Value
		}
	}
	return ""
}

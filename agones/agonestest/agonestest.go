// Package agonestest runs Agones' real SDK server (sdk-server --local: one
// GameServer read from a file, no Kubernetes) for the tests of package
// agones, of the daemon wired to it and of the interop suite, and drives
// it as a game would, through its REST SDK. The binary is built from
// Agones' source (no registry serves it) and lies outside the repository,
// in ../shared/clients/agones-sdk-server/ beside it; without it the tests
// that need it skip, saying so: the repository builds and tests without
// ../shared.
package agonestest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/testkit"
)

// Rel is where the sdk-server binary lies relative to the folder that
// holds the repository.
const Rel = "shared/clients/agones-sdk-server/sdk-server"

// Env names the variable that, when set, is the sdk-server binary's path.
const Env = "QUERYD_AGONES_SDK_SERVER"

// Need returns the sdk-server binary: $QUERYD_AGONES_SDK_SERVER, else
// ../shared/clients/agones-sdk-server/sdk-server beside the working
// folder or any folder above it. It skips the test under -short (the SDK
// server is a real process) and when the binary is absent.
func Need(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("SKIP: the real Agones SDK server: -short")
	}
	if p := os.Getenv(Env); p != "" {
		return p
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(filepath.Dir(dir), Rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	t.Skipf("SKIP: Agones' sdk-server not found: set %s or put it at ../%s beside the repository", Env, Rel)
	return ""
}

// GameServerYAML is a GameServer file for the SDK server's local mode in
// state st, named name in its manifest's annotation, with a "players"
// Counter and List of capacity 16 (in local mode they are read from
// status:, not spec:) and the status port "default" 7654.
func GameServerYAML(st, name, mapName string) string {
	return fmt.Sprintf(`apiVersion: "agones.dev/v1"
kind: GameServer
metadata:
  name: local-game
  annotations:
    queryd.dev/name: %q
    queryd.dev/game: "Example Game"
    queryd.dev/rule.region: "eu"
  labels:
    queryd.dev/map: %q
spec:
  ports:
  - name: default
    containerPort: 7654
status:
  state: %s
  address: 127.0.0.1
  ports:
  - name: default
    port: 7654
  counters:
    players:
      count: 0
      capacity: 16
  lists:
    players:
      capacity: 16
      values: []
`, name, mapName, st)
}

// Server is Agones' SDK server in local mode on loopback ports.
type Server struct {
	// Wrap, when set before Run, is a command prefix the SDK server runs
	// under ("ip", "netns", "exec", NS: in that network namespace, whose
	// loopback it then listens on).
	Wrap []string
	// Client, when set before Run, is the HTTP client Run and Call reach
	// the SDK server with (one connecting from inside Wrap's namespace);
	// nil: http.DefaultClient.
	Client *http.Client

	t                  testing.TB
	bin, file          string
	HTTP, GRPC, Health int
	mu                 sync.Mutex
	cmd                *exec.Cmd
	log                *testkit.Buffer
	done               chan struct{}
}

// Start writes gameServer (YAML) to a file and runs the SDK server on it
// until the test ends; it skips the test without the binary (Need).
func Start(t testing.TB, gameServer string) *Server {
	t.Helper()
	s := New(t, gameServer)
	s.Run()
	return s
}

// New is Start without running the SDK server yet: its ports are chosen
// (Addr) and its file written; Run starts it.
func New(t testing.TB, gameServer string) *Server {
	t.Helper()
	s := &Server{t: t, bin: Need(t), file: filepath.Join(t.TempDir(), "gameserver.yaml")}
	s.HTTP, s.GRPC, s.Health = FreePort(t), FreePort(t), FreePort(t)
	s.Write(gameServer)
	t.Cleanup(s.Kill)
	return s
}

// Addr is the SDK server's HTTP address as [agones] sdk names it.
func (s *Server) Addr() string { return "localhost:" + strconv.Itoa(s.HTTP) }

// Write rewrites the GameServer file in place: the SDK server watches the
// file and reads it again whole, forgetting the labels and annotations set
// through the SDK (a new GameServer, as after a restart of the game).
func (s *Server) Write(gameServer string) {
	s.t.Helper()
	if err := os.WriteFile(s.file, []byte(gameServer), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

// Run starts the SDK server (again, after Kill) and waits until it
// answers GET /gameserver.
func (s *Server) Run() {
	s.t.Helper()
	log := &testkit.Buffer{}
	args := append(append([]string(nil), s.Wrap...), s.bin, "--local", "-f", s.file,
		"--http-port", strconv.Itoa(s.HTTP), "--grpc-port", strconv.Itoa(s.GRPC), "--health-port", strconv.Itoa(s.Health))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.log, s.done = cmd, log, done
	s.mu.Unlock()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := s.client().Get("http://" + s.Addr() + "/gameserver"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-done:
			s.t.Fatalf("sdk-server exited: %s", log)
		case <-time.After(50 * time.Millisecond):
		}
	}
	s.t.Fatalf("sdk-server did not answer in 15s: %s", log)
}

// Kill ends the SDK server at once (SIGKILL), as a crash would.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Kill()
	<-done
}

// Call sends one REST SDK request as a game would, and fails the test
// unless it is answered 200. Examples: PUT /metadata/annotation
// {"key":"map","value":"de_dust2"}; POST /v1beta1/lists/players:addValue
// {"value":"alice"}; PATCH /v1beta1/counters/players {"countDiff":"1"};
// POST /shutdown {}.
func (s *Server) Call(method, path, body string) {
	s.t.Helper()
	req, err := http.NewRequest(method, "http://"+s.Addr()+path, bytes.NewBufferString(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client().Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("%s %s %s: %s %s", method, path, body, resp.Status, b)
	}
}

// client is Client, or http.DefaultClient.
func (s *Server) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	return http.DefaultClient
}

// FreePort returns a TCP port free on loopback now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

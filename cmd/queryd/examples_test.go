package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The feed examples (examples/ and feed.ExampleClient) run against a live
// daemon; `queryd query -proto a2s` (the binary CI and the Dockerfile build:
// CGO_ENABLED=0 go build ./cmd/queryd) must then show what they fed.

// feederOutput is what the Go, Node.js and Python feeders print.
const feederOutput = `replace: ok
Bob joined: ok
Carol joined: ok
Bob scored: ok
Carol left: ok
ping: ok
rejected as expected: state.max_players: want an integer from 0 to 65535, got -1
players: Alice 3, Bob 10
`

// buildStatic builds queryd as CI and deploy/docker/Dockerfile do
// (CGO_ENABLED=0 go build ./cmd/queryd) into a temp dir.
func buildStatic(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "queryd")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build ./cmd/queryd: %v\n%s", err, out)
	}
	return bin
}

// goTool is the go command running these tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// checkStatic: the binary the Dockerfile copies into a distroless image
// has no ELF interpreter (it is static) and runs.
func checkStatic(t *testing.T, bin string) {
	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Fatal("the CGO_ENABLED=0 build has an ELF interpreter: it is not static")
			}
		}
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "queryd ") {
		t.Fatalf("queryd version: %q %v", out, err)
	}
}

// runExample runs one feeder with the feed socket in QUERYD_FEED_SOCKET and
// returns its stdout.
func runExample(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// checkFed asks the daemon with `queryd query -proto a2s -json` (the
// static binary) and checks the state every feeder leaves.
func checkFed(t *testing.T, bin, addr, name string) {
	t.Helper()
	out, err := exec.Command(bin, "query", "-proto", "a2s", "-json", "-timeout", "3s", addr).Output()
	if err != nil {
		t.Fatalf("queryd query -proto a2s %s: %v", addr, err)
	}
	var res struct {
		Info struct {
			Name, Map  string
			Players    int
			MaxPlayers int `json:"max_players"`
		}
		Players []struct {
			Name  string
			Score int
		}
		Rules map[string]string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("queryd query output %q: %v", out, err)
	}
	var ps []string
	for _, p := range res.Players {
		ps = append(ps, p.Name+" "+strconv.Itoa(p.Score))
	}
	if res.Info.Name != name || res.Info.Map != "example_map" || res.Info.MaxPlayers != 16 || res.Info.Players != 2 ||
		strings.Join(ps, ", ") != "Alice 3, Bob 10" || res.Rules["mp_timelimit"] != "30" {
		t.Fatalf("after the %q feeder, queryd query shows %+v", name, res)
	}
}

func TestFeedExamples(t *testing.T) {
	bin := buildStatic(t)
	t.Run("static build", func(t *testing.T) { checkStatic(t, bin) })
	dir := testDir(t)
	d := startTestDaemon(t, writeConfig(t, dir, ""))
	addr := d.UDP().String()
	sock := filepath.Join(dir, "feed.sock")
	env := []string{"QUERYD_FEED_SOCKET=" + sock, "QUERYD_EXAMPLE_SOCKET=" + sock, "QUERYD=" + bin}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("go", func(t *testing.T) {
		// feed.ExampleClient checks its own output (// Output:).
		out := runExample(t, env, goTool(), "test", "-count=1", "-run", "^ExampleClient$", "-v", "../../feed")
		if !strings.Contains(out, "--- PASS: ExampleClient") {
			t.Fatalf("go test -run ExampleClient:\n%s", out)
		}
		checkFed(t, bin, addr, "Go feeder example")
	})
	t.Run("node", func(t *testing.T) {
		node, err := exec.LookPath("node")
		if err != nil {
			t.Skip("node is not installed: examples/node/feeder.mjs not run (CI installs it)")
		}
		// The socket as an argument here; the others take it from the environment.
		if out := runExample(t, nil, node, filepath.Join(examples, "node", "feeder.mjs"), sock); out != feederOutput {
			t.Fatalf("feeder.mjs printed:\n%s\nwant:\n%s", out, feederOutput)
		}
		checkFed(t, bin, addr, "Node.js feeder example")
	})
	t.Run("python", func(t *testing.T) {
		py, err := exec.LookPath("python3")
		if err != nil {
			t.Skip("python3 is not installed: examples/python/feeder.py not run (CI has it)")
		}
		if out := runExample(t, env, py, filepath.Join(examples, "python", "feeder.py")); out != feederOutput {
			t.Fatalf("feeder.py printed:\n%s\nwant:\n%s", out, feederOutput)
		}
		checkFed(t, bin, addr, "Python feeder example")
	})
	t.Run("shell", func(t *testing.T) {
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("bash is not installed: examples/shell/feed.sh not run")
		}
		out := runExample(t, env, bash, filepath.Join(examples, "shell", "feed.sh"))
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 7 || strings.Count(out, `{"ok":true,"version":`) != 6 ||
			!strings.HasPrefix(lines[6], `rejected as expected: {"ok":false,"error":"state.max_players: want an integer`) {
			t.Fatalf("feed.sh printed:\n%s", out)
		}
		checkFed(t, bin, addr, "Shell feeder example")
	})
}

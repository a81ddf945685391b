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

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/internal/testkit/querydtest"
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

// releaseVersion and releaseCommit are what the release build stamps.
const releaseVersion, releaseCommit = "v1.2.3", "0123abc"

// release is queryd built as a release is (.goreleaser.yaml,
// deploy/docker/Dockerfile): CGO_ENABLED=0, -trimpath, -ldflags "-s -w"
// with the version and commit stamped. Every test of the built command
// shares one build (internal/testkit/querydtest).
var release = querydtest.Build{Static: true, TrimPath: true,
	LDFlags: "-s -w -X main.version=" + releaseVersion + " -X main.commit=" + releaseCommit}

// buildStatic returns queryd built as a release is (release).
func buildStatic(t *testing.T) string {
	t.Helper()
	return release.Binary(t)
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
	t.Parallel() // waits on the feeders (node, python3, bash) and the daemon
	if testing.Short() {
		t.Skip("the examples in their real runtimes, a static build: skipped under -short")
	}
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

// feeders are the example feeders that find the socket themselves, each as
// a command line without a socket argument; one whose interpreter is missing
// is left out (and logged).
func feeders(t *testing.T, examples string) map[string][]string {
	t.Helper()
	cmds := map[string][]string{}
	for name, c := range map[string][2]string{
		"node":   {"node", filepath.Join(examples, "node", "feeder.mjs")},
		"python": {"python3", filepath.Join(examples, "python", "feeder.py")},
		"shell":  {"bash", filepath.Join(examples, "shell", "feed.sh")},
	} {
		p, err := exec.LookPath(c[0])
		if err != nil {
			t.Logf("%s is not installed: the %s feeder not run", c[0], name)
			continue
		}
		cmds[name] = []string{p, c[1]}
	}
	return cmds
}

// runFailing runs one command that must fail and returns its stderr.
func runFailing(t *testing.T, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err == nil {
		t.Fatalf("%s: exit 0 without a daemon", strings.Join(args, " "))
	}
	return errb.String()
}

// TestFeedExamplesFindTheSocket: without a socket argument or
// QUERYD_FEED_SOCKET, the Node.js, Python and shell feeders use the socket
// `queryd push` uses (that of [feed] socket = "", the demo config's:
// $XDG_RUNTIME_DIR/queryd/feed.sock, else <TMPDIR>/queryd-<uid>/feed.sock),
// feed a daemon listening there, and name the path they tried when nothing
// listens (they used to try /run/queryd/feed.sock and print "[Errno 2] No
// such file or directory").
func TestFeedExamplesFindTheSocket(t *testing.T) {
	if testing.Short() {
		t.Skip("the examples in their real runtimes, a static build: skipped under -short")
	}
	bin := buildStatic(t)
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	cmds := feeders(t, examples)
	if len(cmds) == 0 {
		t.Skip("none of node, python3 and bash is installed")
	}
	env := []string{"QUERYD=" + bin}
	t.Setenv("QUERYD_FEED_SOCKET", "")
	pushSocket := func() string {
		def, err := config.Parse(config.Default, configModules()...)
		if err != nil {
			t.Fatal(err)
		}
		return def.FeedSocket()
	}

	t.Run("fed", func(t *testing.T) {
		dir := testDir(t)
		t.Setenv("XDG_RUNTIME_DIR", dir)
		conf := strings.Replace(daemontest.Base(dir), `socket = "`+filepath.Join(dir, "feed.sock")+`"`, `socket = ""`, 1)
		path := filepath.Join(dir, "queryd.toml")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		d := startTestDaemon(t, path)
		if _, err := os.Stat(pushSocket()); err != nil {
			t.Fatalf("the daemon with [feed] socket = \"\" did not listen where queryd push looks: %v", err)
		}
		for name, cmd := range cmds {
			out := runExample(t, env, cmd[0], cmd[1:]...)
			if name == "shell" {
				if strings.Count(out, `{"ok":true,"version":`) != 6 {
					t.Fatalf("feed.sh printed:\n%s", out)
				}
				checkFed(t, bin, d.UDP().String(), "Shell feeder example")
				continue
			}
			if out != feederOutput {
				t.Fatalf("the %s feeder printed:\n%s\nwant:\n%s", name, out, feederOutput)
			}
		}
	})
	for _, c := range []struct{ name, xdg, tmp string }{
		{"XDG_RUNTIME_DIR", testDir(t), ""},
		{"TMPDIR", "", testDir(t)},
	} {
		t.Run("missing, "+c.name, func(t *testing.T) {
			t.Setenv("XDG_RUNTIME_DIR", c.xdg)
			if c.tmp != "" {
				t.Setenv("TMPDIR", c.tmp)
			}
			want := pushSocket()
			if !strings.HasPrefix(want, c.xdg+c.tmp) {
				t.Fatalf("queryd push's socket %s is not under %s", want, c.xdg+c.tmp)
			}
			for name, cmd := range cmds {
				if errOut := runFailing(t, env, cmd...); !strings.Contains(errOut, want) {
					t.Errorf("the %s feeder without a daemon: stderr %q does not name %s", name, errOut, want)
				}
			}
		})
	}
}

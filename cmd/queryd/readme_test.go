package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// README.md's "First ten minutes" is one sh block that a new user pastes
// into a shell in a fresh clone. Under each command, the lines starting
// with "# " are what it prints (stdout and stderr, as a terminal shows
// them), "…" standing for what varies (a round trip, a time); a command
// with no such line prints nothing. The test runs that very block.

// readmeStep is one command of the block and what the README says it prints.
type readmeStep struct {
	cmd  string   // the command, with a heredoc's lines
	want []string // its output, line by line; nil: none
}

// readmeBlock returns the first sh block under README.md's heading.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no %q", heading)
	}
	_, rest, ok = strings.Cut(rest, "\n```sh\n")
	block, _, ok2 := strings.Cut(rest, "\n```\n")
	if !ok || !ok2 {
		t.Fatalf("README.md's %q has no ```sh block", heading)
	}
	return block + "\n"
}

var heredoc = regexp.MustCompile(`<<-?\s*'?"?([A-Za-z_]+)'?"?`)

// readmeSteps splits a block into its commands and their outputs.
func readmeSteps(t *testing.T, block string) []readmeStep {
	t.Helper()
	var steps []readmeStep
	lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.HasPrefix(line, "#") {
			if len(steps) == 0 {
				t.Fatalf("the block starts with output, not a command: %q", line)
			}
			s := &steps[len(steps)-1]
			s.want = append(s.want, strings.TrimPrefix(strings.TrimPrefix(line, "#"), " "))
			continue
		}
		cmd := line
		if m := heredoc.FindStringSubmatch(line); m != nil {
			for i++; i < len(lines) && lines[i] != m[1]; i++ {
				cmd += "\n" + lines[i]
			}
			if i == len(lines) {
				t.Fatalf("the heredoc of %q has no %s line", line, m[1])
			}
			cmd += "\n" + m[1]
		}
		steps = append(steps, readmeStep{cmd: cmd})
	}
	return steps
}

// matches reports whether out is what want says, "…" matching anything.
func (s readmeStep) matches(out string) bool {
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if out == "" {
		got = nil
	}
	if len(got) != len(s.want) {
		return false
	}
	for i, w := range s.want {
		parts := strings.Split(w, "…")
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		if !regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(got[i]) {
			return false
		}
	}
	return true
}

// readmeScript is the block as a bash script that writes each command's
// output to its own file in out (0, 1, …), run in the same shell so that
// cd, export and jobs carry over as in a terminal.
func readmeScript(steps []readmeStep, out string) string {
	var b strings.Builder
	for i, s := range steps {
		fmt.Fprintf(&b, "{ %s\n} >%q 2>&1\n", s.cmd, filepath.Join(out, strconv.Itoa(i)))
	}
	return b.String()
}

// freePorts returns a UDP port and a TCP port on 127.0.0.1 no one held a
// moment ago.
func freePorts(t *testing.T) (udp, tcp int) {
	t.Helper()
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return u.LocalAddr().(*net.UDPAddr).Port, l.Addr().(*net.TCPAddr).Port
}

// goEnv returns the go command's settings a fresh HOME would lose: the
// build and module caches (so nothing is built or downloaded again) and
// where modules come from.
func goEnv(t *testing.T) []string {
	t.Helper()
	keys := []string{"GOCACHE", "GOMODCACHE", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GOFLAGS", "GOTOOLCHAIN"}
	out, err := exec.Command(goTool(), append([]string{"env", "-json"}, keys...)...).Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	var vals map[string]string
	if err := json.Unmarshal(out, &vals); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, k := range keys {
		env = append(env, k+"="+vals[k])
	}
	return env
}

// TestREADMEFirstTenMinutes runs README.md's "First ten minutes" block as
// a new user pastes it in a fresh clone, with a fresh HOME (the binary
// lands in $HOME/go/bin, where the README says) and XDG_RUNTIME_DIR, on
// free ports in place of 27015 and 9273, and checks that each command
// prints what the README says under it: the config checks, the daemon
// answers [server] in every protocol (not fed yet), the status page is
// there, a push makes every protocol answer the fed state, then after
// stale_after nothing answers and /healthz says silent, and a ping brings
// it back. A change to queryd that makes the README wrong fails here.
func TestREADMEFirstTenMinutes(t *testing.T) {
	t.Parallel() // a bash script of its own on free ports: it waits on go and the daemon
	if testing.Short() {
		t.Skip("runs README.md's first ten minutes (go install, a daemon, stale_after): -short")
	}
	for _, tool := range []string{"bash", "curl", "grep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: README.md's first ten minutes need it", tool)
		}
	}
	block := readmeBlock(t, "## First ten minutes")
	for _, addr := range []string{"127.0.0.1:27015", "127.0.0.1:9273"} {
		if !strings.Contains(block, addr) {
			t.Fatalf("the block no longer uses %s (the test puts a free port in its place)", addr)
		}
	}
	udp, tcp := freePorts(t)
	block = strings.ReplaceAll(block, "127.0.0.1:27015", "127.0.0.1:"+strconv.Itoa(udp))
	block = strings.ReplaceAll(block, "127.0.0.1:9273", "127.0.0.1:"+strconv.Itoa(tcp))
	steps := readmeSteps(t, block)

	dir := t.TempDir()
	home, runtime, tmp, out := filepath.Join(dir, "home"), filepath.Join(dir, "run"), filepath.Join(dir, "tmp"), filepath.Join(dir, "out")
	for _, d := range []string{home, runtime, tmp, out} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "first-ten-minutes.sh")
	if err := os.WriteFile(script, []byte(readmeScript(steps, out)), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = root
	cmd.Env = append(cleanEnv("HOME", "XDG_RUNTIME_DIR", "TMPDIR", "GOPATH", "GOBIN", "PATH"),
		"HOME="+home, "XDG_RUNTIME_DIR="+runtime, "TMPDIR="+tmp,
		"PATH="+filepath.Dir(goTool())+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, goEnv(t)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The daemon the block starts in the background is in the script's
	// process group: end it whatever happened.
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	runErr := cmd.Wait()

	failed := false
	for i, s := range steps {
		got, err := os.ReadFile(filepath.Join(out, strconv.Itoa(i)))
		if err != nil {
			t.Errorf("step %d did not run (%v): %s", i, err, s.cmd)
			failed = true
			break
		}
		if !s.matches(string(got)) {
			t.Errorf("README.md's first ten minutes, step %d:\n%s\nprinted:\n%s\nREADME.md says:\n%s", i, s.cmd, got, strings.Join(s.want, "\n"))
			failed = true
		}
	}
	if runErr != nil {
		t.Errorf("the block: %v", runErr)
	}
	if _, err := os.Stat(filepath.Join(home, "go", "bin", "queryd")); err != nil {
		t.Errorf("go install did not put queryd in $HOME/go/bin, where the README says: %v", err)
	}
	if failed {
		logs, _ := filepath.Glob(filepath.Join(tmp, "*", "queryd.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, b)
		}
	}
}

// cleanEnv is this process's environment without the named variables.
func cleanEnv(drop ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range drop {
			keep = keep && k != d
		}
		if keep {
			env = append(env, kv)
		}
	}
	return env
}

// TestDocSizes holds the documents a newcomer reads first to their sizes:
// README.md under 10,000 bytes (CONTRIBUTING.md), the benchmark and attack
// suite guides within 10 KiB (their history is in git, not in them).
func TestDocSizes(t *testing.T) {
	for _, d := range []struct {
		path string
		max  int64
	}{
		{"../../README.md", 9999},
		{"../../bench/README.md", 10 << 10},
		{"../../hostile/README.md", 10 << 10},
	} {
		fi, err := os.Stat(d.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > d.max {
			t.Errorf("%s is %d bytes, more than %d: move detail to docs/ (or, for figures, keep the latest only)", d.path, fi.Size(), d.max)
		}
	}
}

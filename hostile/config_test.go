package hostile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileConfig is a config file built to exhaust the config loader.
type hostileConfig struct {
	name string
	text []byte
	want string // in the error
}

// hostileConfigs are the configs of the finding (before the fix: a stack
// overflow after 900 MB; 16 s and 4.2 GB; over 10 GB) and neighbours of
// them. Each must be refused at once.
func hostileConfigs() []hostileConfig {
	deep := func(open, inner, close string, n int) []byte {
		return []byte("[server]\nx = " + strings.Repeat(open, n) + inner + strings.Repeat(close, n) + "\n")
	}
	return []hostileConfig{
		{"[server] arrays 1,000,000 deep (2 MB)", deep("[", "", "]", 1_000_000), "larger than 1048576 bytes"},
		{"[server] inline tables 10,000 deep (40 KB)", deep("{a=", "1", "}", 10_000), "server.x: nested deeper than 32 levels (line 2)"},
		{"[server] inline tables 100,000 deep (400 KB)", deep("{a=", "1", "}", 100_000), "server.x: nested deeper than 32 levels (line 2)"},
		{"[server] arrays 500,000 deep (1 MB)", deep("[", "", "]", 500_000), "server.x: nested deeper than 32 levels (line 2)"},
		{"[server] dotted key of 10,000 parts (20 KB)", []byte("[server]\n" + strings.Repeat("a.", 9_999) + "a = 1\n"), "nested deeper than 32 levels (line 2)"},
	}
}

// rssKiB is a process's resident set size (VmRSS) in KiB, 0 once it is gone.
func rssKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// watchRSS kills pid when its RSS passes capKiB (checked every 10 ms) until
// done is closed, and reports whether it did: a guard so that a loader
// that exhausts memory fails the test instead of the machine.
func watchRSS(pid int, capKiB int64, done <-chan struct{}) <-chan bool {
	killed := make(chan bool, 1)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				killed <- false
				return
			case <-tick.C:
				if rssKiB(pid) > capKiB {
					syscall.Kill(pid, syscall.SIGKILL)
					killed <- true
					return
				}
			}
		}
	}()
	return killed
}

// TestCheckHostileConfig runs `queryd check` on each hostile config: it
// exits 1 within 1 s naming the limit, key and line, its peak RSS under
// 96 MiB (a race-built check of the example config peaks at about 30 MiB).
// A check past 1 GiB or 20 s is killed and fails the test.
func TestCheckHostileConfig(t *testing.T) {
	dir := t.TempDir()
	for _, c := range hostileConfigs() {
		path := filepath.Join(dir, "hostile.toml")
		if err := os.WriteFile(path, c.text, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, querydBin, "check", "-config", path)
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		done := make(chan struct{})
		killed := watchRSS(cmd.Process.Pid, 1<<20, done)
		err := cmd.Wait()
		took := time.Since(start)
		close(done)
		cancel()
		var exit *exec.ExitError
		if <-killed {
			t.Errorf("%s: queryd check passed 1 GiB RSS after %v; killed", c.name, took)
			continue
		}
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(out.String(), c.want) {
			t.Errorf("%s: %v after %v; want exit status 1 and %q in:\n%.600s", c.name, err, took, c.want, out.String())
			continue
		}
		peak := int64(0)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = ru.Maxrss // KiB on Linux
		}
		if took > time.Second || peak > 96<<10 {
			t.Errorf("%s: refused after %v with a peak RSS of %d KiB; want under 1 s and 96 MiB", c.name, took, peak)
		}
		t.Logf("%s: %d bytes, refused in %v, peak RSS %.1f MiB: %s", c.name, len(c.text), took.Round(time.Millisecond),
			float64(peak)/1024, strings.TrimSpace(lastLine(out.String())))
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

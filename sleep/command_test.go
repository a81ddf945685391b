package sleep

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needSh skips where there is no /bin/sh to write test commands in.
func needSh(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh: the command tests are skipped")
	}
}

// TestRunExit: exit 0 is no error; a non-zero exit is, with its status and
// output; a program that is not there is; argv is no shell line.
func TestRunExit(t *testing.T) {
	needSh(t)
	if r := Run(context.Background(), []string{"/bin/sh", "-c", "echo started"}, 10*time.Second); r.Err != nil || r.Output != "started" {
		t.Fatalf("exit 0: %+v", r)
	}
	r := Run(context.Background(), []string{"/bin/sh", "-c", "echo no such unit >&2; exit 5"}, 10*time.Second)
	var ee *exec.ExitError
	if !errors.As(r.Err, &ee) || ee.ExitCode() != 5 || r.Output != "no such unit" {
		t.Fatalf("exit 5: %+v", r)
	}
	if r := Run(context.Background(), []string{"/no/such/program"}, time.Second); r.Err == nil {
		t.Fatal("a program that is not there ran")
	}
	dir := t.TempDir()
	mark := filepath.Join(dir, "x")
	r = Run(context.Background(), []string{"/bin/echo", "; touch " + mark}, 10*time.Second)
	if _, err := os.Stat(mark); err == nil || r.Output != "; touch "+mark {
		t.Fatalf("an argument was run as a shell line: %+v", r)
	}
}

// TestRunOutputBounded: output past MaxOutput is counted, not kept.
func TestRunOutputBounded(t *testing.T) {
	needSh(t)
	r := Run(context.Background(), []string{"/bin/sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"}, 10*time.Second)
	if r.Err != nil || len(r.Output) != MaxOutput || r.Dropped != 100000-MaxOutput {
		t.Fatalf("kept %d bytes, dropped %d: %v", len(r.Output), r.Dropped, r.Err)
	}
}

// TestRunTimeoutKillsGroup: a command past its timeout is killed with the
// programs it started (its process group), and says so.
func TestRunTimeoutKillsGroup(t *testing.T) {
	needSh(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	r := Run(context.Background(), []string{"/bin/sh", "-c", "sleep 300 & echo $! > " + pidFile + "; wait"}, time.Second)
	if !errors.Is(r.Err, ErrTimeout) || time.Since(start) > 10*time.Second {
		t.Fatalf("a hung command: %+v after %s", r, time.Since(start))
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			break
		}
		if stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); strings.Contains(string(stat), ") Z ") {
			break // killed, waiting for its parent
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the command's child %d still runs", pid)
		}
	}
}

// TestRunLeavesProgram: a start that launches a program which keeps its
// output open and exits 0 is done (within waitDelay), not hung, and the
// program is left running.
func TestRunLeavesProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 2 s for the output pipes: -short")
	}
	needSh(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	r := Run(context.Background(), []string{"/bin/sh", "-c", "sleep 300 & echo $! > " + pidFile}, 30*time.Second)
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	defer syscall.Kill(pid, syscall.SIGKILL)
	if r.Err != nil || time.Since(start) > 10*time.Second {
		t.Fatalf("start that left a program: %+v after %s", r, time.Since(start))
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the program it started is gone: %v", err)
	}
}

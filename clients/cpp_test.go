package clients_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/sagl"
)

// TestCppClient compiles clients/cpp/example.cpp with g++ and with clang++
// at -std=c++17 -Wall -Wextra -Werror, and runs each build through the
// scenario (its state over A2S and SAGL, pings, a queryd restart under it)
// over the feed socket.
func TestCppClient(t *testing.T) {
	for _, cxx := range []string{"g++", "clang++"} {
		t.Run(cxx, func(t *testing.T) {
			compiler := need(t, cxx, "the C++ client built with "+cxx)
			bin := filepath.Join(t.TempDir(), "example")
			run(t, "cpp", compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", bin, "example.cpp")
			scenario(t, newDaemon(t), exec.Command(bin), false)
		})
	}
}

// TestCppQueue: with queryd frozen (SIGSTOP), 10 patches through a Feed
// whose queue holds 2 return at once; once queryd runs again it gets the
// newest state (tick 10) in at most 2 changes (the patch in flight, then
// one replace of the whole newest state), not 10.
func TestCppQueue(t *testing.T) {
	gxx := need(t, "g++", "the C++ client's queue")
	bin := filepath.Join(t.TempDir(), "queue_test")
	run(t, "cpp", gxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", bin, "queue_test.cpp")
	queueScenario(t, exec.Command(bin))
}

// queueScenario runs a queue test program (clients/cpp/queue_test.cpp,
// clients/csharp/QueueTest.cs): it prints "ready" once its state is fed,
// sends 10 patches (tick 1 to 10) through a queue of 2 when a line comes
// on stdin, prints "patched", and runs until stdin closes. queryd is frozen
// meanwhile; then it must get tick 10 in 1 or 2 changes.
func queueScenario(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	d := newDaemon(t)
	d.start(t)
	cmd.Env = append(os.Environ(), "QUERYD_FEED_SOCKET="+d.socket)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	expect := func(want string) {
		t.Helper()
		if !lines.Scan() || lines.Text() != want {
			t.Fatalf("the queue test printed %q, want %q", lines.Text(), want)
		}
	}
	expect("ready")
	v0 := d.metric(t, "queryd_state_version")
	d.cmd.Process.Signal(syscall.SIGSTOP)
	io.WriteString(stdin, "go\n")
	start := time.Now()
	expect("patched")
	took := time.Since(start)
	time.Sleep(300 * time.Millisecond)
	d.cmd.Process.Signal(syscall.SIGCONT)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if tick, err := saglTick(d); err == nil && tick == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("queryd never got tick 10 after SIGCONT")
		}
	}
	time.Sleep(500 * time.Millisecond)
	changes := d.metric(t, "queryd_state_version") - v0
	t.Logf("10 patches with queryd frozen returned in %v; queryd then took %d changes to the newest state", took.Round(time.Microsecond), changes)
	if changes < 1 || changes > 2 {
		t.Errorf("queryd took %d changes for 10 patches through a queue of 2, want 1 or 2 (the rest as one replace)", changes)
	}
}

// saglTick returns values.tick as SAGL answers it.
func saglTick(d *daemon) (float64, error) {
	sc, err := sagl.Dial(d.udp)
	if err != nil {
		return 0, err
	}
	defer sc.Close()
	res, err := sc.Info()
	if err != nil {
		return 0, err
	}
	tick, _ := res.Info.Values["tick"].(float64)
	return tick, nil
}

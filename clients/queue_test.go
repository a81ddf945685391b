package clients_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/sagl"
)

// queueScenario runs a queue test program (clients/cpp/queue_test.cpp,
// clients/csharp/QueueTest.cs, clients/godot/example/queue_test.gd): it
// prints "ready" once its state is fed, sends 10 patches (tick 1 to 10)
// through a queue of 2 when a line comes on stdin (or, with goFile, once
// that file exists), prints "patched", and runs until stdin closes. queryd
// is frozen meanwhile; then it must get tick 10 in at most 3 changes: the
// one the worker had already written when queryd froze (the kernel takes it
// while queryd is stopped; the worker then waits for its reply) and the
// queue's 2, the rest folded into them.
func queueScenario(t *testing.T, d *daemon, cmd *exec.Cmd, goFile string) {
	t.Helper()
	d.Start(t)
	cmd.Env = append(append(os.Environ(), d.env()...), cmd.Env...)
	if goFile != "" {
		cmd.Env = append(cmd.Env, "QUERYD_QUEUE_GO_FILE="+goFile)
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	expect := func(want string) { // skipping other lines (Godot's banner)
		t.Helper()
		for lines.Scan() {
			if lines.Text() == want {
				return
			}
		}
		t.Fatalf("the queue test ended without printing %q", want)
	}
	expect("ready")
	waitTick(t, d, 0) // its first state answered: nothing more in flight
	v0 := d.Metric(t, `queryd_state_version{server="main"}`)
	d.Signal(t, syscall.SIGSTOP)
	if goFile != "" {
		os.WriteFile(goFile, nil, 0o600)
	} else {
		io.WriteString(stdin, "go\n")
	}
	start := time.Now()
	expect("patched")
	took := time.Since(start)
	time.Sleep(300 * time.Millisecond)
	d.Signal(t, syscall.SIGCONT)
	waitTick(t, d, 10)
	time.Sleep(500 * time.Millisecond)
	changes := d.Metric(t, `queryd_state_version{server="main"}`) - v0
	t.Logf("10 patches with queryd frozen returned in %v; queryd then took %.0f changes to the newest state", took.Round(time.Microsecond), changes)
	if changes < 1 || changes > 3 {
		t.Errorf("queryd took %.0f changes for 10 patches through a queue of 2, want 1 to 3 (one in flight, the queue's 2, the rest folded in)", changes)
	}
}

// waitTick waits until SAGL answers values.tick = want.
func waitTick(t *testing.T, d *daemon, want float64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if tick, err := saglTick(d); err == nil && tick == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queryd never answered tick %v", want)
		}
	}
}

// saglTick returns values.tick as SAGL answers it.
func saglTick(d *daemon) (float64, error) {
	sc, err := sagl.Dial(d.UDPAddr)
	if err != nil {
		return 0, err
	}
	defer sc.Close()
	res, err := sc.Info()
	if err != nil {
		return 0, err
	}
	tick, ok := res.Info.Values["tick"].(float64)
	if !ok {
		return -1, nil // not fed yet
	}
	return tick, nil
}

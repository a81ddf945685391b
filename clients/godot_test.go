package clients_test

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestGodotClient runs clients/godot/example/main.gd headless with Debian's
// godot3-server (the addon addons/queryd_feed/queryd_feed.gd over the HTTP
// feed with HTTPClient) through the scenario: its state over A2S and SAGL,
// pings, a queryd restart under it.
func TestGodotClient(t *testing.T) {
	t.Parallel()
	godot := need(t, "godot3-server", "the Godot client (Debian: godot3-server)")
	cmd := exec.Command(godot, "--path", "godot", "-s", "example/main.gd")
	cmd.Env = []string{"HOME=" + t.TempDir()} // Godot's user data folder
	scenario(t, newDaemon(t), cmd, true)
}

// TestGodotQueue: example/queue_test.gd through the queue scenario (see
// TestCppQueue) on godot3-server over the HTTP feed.
func TestGodotQueue(t *testing.T) {
	t.Parallel()
	godot := need(t, "godot3-server", "the Godot client's queue (Debian: godot3-server)")
	cmd := exec.Command(godot, "--path", "godot", "-s", "example/queue_test.gd")
	home := t.TempDir()
	cmd.Env = []string{"HOME=" + home}
	queueScenario(t, newDaemon(t), cmd, filepath.Join(home, "go"))
}

// TestGodotRecover: example/recover_test.gd on godot3-server over the HTTP
// feed through the recover rows (see recoverRows): a queryd restart, a
// rejected patch then a restart, a rejected patch before queryd runs.
func TestGodotRecover(t *testing.T) {
	t.Parallel()
	godot := need(t, "godot3-server", "the Godot client's recovery (Debian: godot3-server)")
	recoverRows(t, processRecover(func() *exec.Cmd {
		cmd := exec.Command(godot, "--path", "godot", "-s", "example/recover_test.gd")
		cmd.Env = []string{"HOME=" + t.TempDir()}
		return cmd
	}))
}

// TestGodotExampleExits: example/main.gd quits by itself after
// QUERYD_EXAMPLE_SECONDS on godot3-server (Godot 3 ignores what a
// SceneTree's _idle returns: it ran until killed before), with no queryd to
// feed.
func TestGodotExampleExits(t *testing.T) {
	t.Parallel()
	godot := need(t, "godot3-server", "the Godot example's exit (Debian: godot3-server)")
	d := newDaemon(t) // never started: only its addresses
	cmd := exec.Command(godot, "--path", "godot", "-s", "example/main.gd")
	cmd.Env = []string{"HOME=" + t.TempDir(), "QUERYD_EXAMPLE_SECONDS=2"}
	c := startClient(t, cmd, d.env())
	start := time.Now()
	select {
	case <-c.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the Godot example still runs 60 s after it started with QUERYD_EXAMPLE_SECONDS=2:\n%s", c.out)
	}
	if !cmd.ProcessState.Success() {
		t.Errorf("the Godot example exited with %v:\n%s", cmd.ProcessState, c.out)
	}
	t.Logf("the Godot example (2 s) exited %v after it started", time.Since(start).Round(time.Millisecond))
}

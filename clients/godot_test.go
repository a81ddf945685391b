package clients_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGodotClient runs clients/godot/example/main.gd headless with Debian's
// godot3-server (the addon addons/queryd_feed/queryd_feed.gd over the HTTP
// feed with HTTPClient) through the scenario: its state over A2S and SAGL,
// pings, a queryd restart under it.
func TestGodotClient(t *testing.T) {
	godot := need(t, "godot3-server", "the Godot client (Debian: godot3-server)")
	cmd := exec.Command(godot, "--path", "godot", "-s", "example/main.gd")
	cmd.Env = []string{"HOME=" + t.TempDir()} // Godot's user data folder
	scenario(t, newDaemon(t), cmd, true)
}

// TestGodotQueue: example/queue_test.gd through the queue scenario (see
// TestCppQueue) on godot3-server over the HTTP feed.
func TestGodotQueue(t *testing.T) {
	godot := need(t, "godot3-server", "the Godot client's queue (Debian: godot3-server)")
	cmd := exec.Command(godot, "--path", "godot", "-s", "example/queue_test.gd")
	home := t.TempDir()
	cmd.Env = []string{"HOME=" + home}
	queueScenario(t, newDaemon(t), cmd, filepath.Join(home, "go"))
}

package clients_test

import (
	"os/exec"
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

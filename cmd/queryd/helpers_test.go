package main

import (
	"os"
	"testing"

	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/internal/testkit/querydtest"
)

// TestMain runs the tests and removes the queryd binaries they built
// (internal/testkit/querydtest).
func TestMain(m *testing.M) { os.Exit(querydtest.Main(m)) }

// testDir is a temp dir short enough for Unix socket paths.
func testDir(t *testing.T) string { return daemontest.Dir(t) }

// writeConfig writes a loopback config (UDP and admin on port 0) with extra
// TOML appended, and returns its path.
func writeConfig(t *testing.T, dir, extra string) string {
	return daemontest.WriteConfig(t, dir, extra)
}

// startTestDaemon runs the daemon with the registration list on the config
// at path, in this process, until the test ends.
func startTestDaemon(t *testing.T, path string) *daemontest.Daemon {
	t.Helper()
	d := daemontest.StartFile(t, daemonModules(), path)
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("the daemon stopped with an error: %v", err)
		}
	})
	return d
}

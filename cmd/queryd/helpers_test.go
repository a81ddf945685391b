package main

import (
	"flag"
	"os"
	"testing"

	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/internal/testkit"
	"github.com/queryd/queryd/internal/testkit/querydtest"
)

// TestMain runs the tests, 4 of the parallel ones at once (they wait on
// timeouts and child processes, not on the CPU), and removes the queryd
// binaries they built (internal/testkit/querydtest).
func TestMain(m *testing.M) {
	flag.Parse()
	testkit.SetParallel(4)
	os.Exit(querydtest.Main(m))
}

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

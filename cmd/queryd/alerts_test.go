package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAlertRulesPromtool runs Prometheus's own checks on docs/alerts.yml:
// `promtool check rules`, and `promtool test rules docs/alerts_test.yml`,
// whose cases fire QuerydServerNotAnswering for a silent and a down server
// and QuerydServerNotFed for one never fed. .ci/run installs promtool
// (Debian's prometheus); without it the test skips, unless
// QUERYD_REQUIRE_CLIENT_TOOLS (set by .ci/run) requires it.
func TestAlertRulesPromtool(t *testing.T) {
	t.Parallel() // waits on timeouts and processes, not on the CPU
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("QUERYD_REQUIRE_CLIENT_TOOLS") != "" {
			t.Fatal("promtool is not installed (Debian: prometheus), and QUERYD_REQUIRE_CLIENT_TOOLS (.ci/run) requires it")
		}
		t.Skip("promtool not installed (Debian: prometheus): docs/alerts.yml not checked by Prometheus")
	}
	docs, err := filepath.Abs(filepath.Join("..", "..", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = docs
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

//go:build linux

package main

import (
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/queryd/queryd/internal/testkit/querydtest"
)

// TestVersionFromLinkFlags builds queryd as a release is built (-ldflags
// -X main.version, -X main.commit: release) and checks that `queryd
// version` and the daemon's queryd_build_info report those values.
func TestVersionFromLinkFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds queryd: -short")
	}
	bin := buildStatic(t)
	out, err := exec.Command(bin, "version").Output()
	want := fmt.Sprintf("queryd %s (commit %s, %s, %s/%s)\n", releaseVersion, releaseCommit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if err != nil || string(out) != want {
		t.Fatalf("queryd version: %q (%v), want %q", out, err, want)
	}
	d := querydtest.Start(t, bin)
	metric := fmt.Sprintf(`queryd_build_info{commit=%q,goversion=%q,version=%q}`, releaseCommit, runtime.Version(), releaseVersion)
	if v := d.Metric(t, metric); v != 1 {
		t.Errorf("%s = %v, want 1", metric, v)
	}
}

// grepLines returns the lines of text that contain sub.
func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

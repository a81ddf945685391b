//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/daemontest"
)

// TestVersionFromLinkFlags builds queryd as a release is built (-ldflags
// -X main.version, -X main.commit) and checks that `queryd version` and
// the daemon's queryd_build_info report those values.
func TestVersionFromLinkFlags(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "queryd")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goTool(), "build", "-ldflags", "-s -w -X main.version=v1.2.3 -X main.commit=0123abc", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -ldflags: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	want := fmt.Sprintf("queryd v1.2.3 (commit 0123abc, %s, %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if err != nil || string(out) != want {
		t.Fatalf("queryd version: %q (%v), want %q", out, err, want)
	}

	dir := daemontest.Dir(t)
	path := daemontest.WriteConfig(t, dir, "")
	admin := fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
	os.WriteFile(path, []byte(strings.Replace(string(mustReadFile(t, path)), `listen = "127.0.0.1:0"`, `listen = "`+admin+`"`, 1)), 0o600)
	daemon := exec.Command(bin, "-config", path)
	daemon.Stderr = io.Discard
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		daemon.Process.Kill()
		daemon.Wait()
	}()
	metric := fmt.Sprintf(`queryd_build_info{commit="0123abc",goversion=%q,version="v1.2.3"} 1`, runtime.Version())
	deadline := time.Now().Add(5 * time.Second)
	for {
		body := ""
		if resp, err := http.Get("http://" + admin + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		}
		if strings.Contains(body, metric) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics has no %s within 5 s:\n%s", metric, grepLines(body, "queryd_build_info"))
		}
		time.Sleep(50 * time.Millisecond)
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

//go:build linux

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/internal/testkit"
)

// TestFeedHTTPTokenSIGHUP runs the daemon as `queryd -config` does and
// changes the token file under it: the new token is taken on a real
// SIGHUP, not before; a token file made unfit keeps the token in use.
func TestFeedHTTPTokenSIGHUP(t *testing.T) {
	dir := daemontest.Dir(t)
	addr := testkit.FreeTCPAddr(t)
	path := withFeedKeys(t, dir, feedHTTPConfig(t, dir, addr, feedToken), "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- cmdRun([]string{"-config", path}, io.Discard) }()
	defer func() {
		sigterm(t)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("cmdRun did not return after SIGTERM")
		}
	}()
	waitHTTP(ctx, t, addr)
	const second = "second-token-abcdefghijklmnop"
	tokFile := filepath.Join(dir, "feed.token")
	os.WriteFile(tokFile, []byte(second), 0o600)
	if code, _ := feedRequest(t, "POST", addr, "/v1/ping", second, ""); code != 401 {
		t.Fatalf("the new token before SIGHUP: %d", code)
	}
	sighup(t)
	waitCode(t, addr, second, 200)
	if code, _ := feedRequest(t, "POST", addr, "/v1/ping", feedToken, ""); code != 401 {
		t.Fatalf("the old token after SIGHUP: %d", code)
	}
	os.Chmod(tokFile, 0o604)
	sighup(t)
	time.Sleep(300 * time.Millisecond) // the reload is asynchronous; nothing must change
	if code, _ := feedRequest(t, "POST", addr, "/v1/ping", second, ""); code != 200 {
		t.Fatalf("the token after a SIGHUP with a 0604 file: %d, want the token kept", code)
	}
}

func sighup(t *testing.T)  { syscall.Kill(os.Getpid(), syscall.SIGHUP) }
func sigterm(t *testing.T) { syscall.Kill(os.Getpid(), syscall.SIGTERM) }

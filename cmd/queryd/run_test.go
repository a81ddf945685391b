//go:build linux

package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/internal/testkit"
)

// TestRunNotifiesSystemd runs the daemon as systemd would (Type=notify) and
// drives it with real signals: READY=1 once listening, RELOADING=1 then
// READY=1 around a SIGHUP reload, STOPPING=1 on SIGTERM.
func TestRunNotifiesSystemd(t *testing.T) {
	dir := daemontest.Dir(t)
	conn := daemontest.NotifyListener(t, filepath.Join(dir, "notify"))
	path := daemontest.WriteConfig(t, dir, "")
	done := make(chan int, 1)
	go func() { done <- cmdRun([]string{"-config", path}, io.Discard) }()

	ready := daemontest.NextNotification(t, conn)
	if !strings.HasPrefix(ready, "READY=1\n") || !strings.Contains(ready, modules[0].Name()) ||
		!strings.Contains(ready, fmt.Sprintf("MAINPID=%d", os.Getpid())) {
		t.Fatalf("first notification %q, want READY=1 with the protocols and MAINPID", ready)
	}
	// The feed socket exists once READY=1 is sent.
	if _, err := os.Stat(filepath.Join(dir, "feed.sock")); err != nil {
		t.Fatalf("READY=1 before the feed socket exists: %v", err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	if got := daemontest.NextNotification(t, conn); !strings.HasPrefix(got, "RELOADING=1\n") {
		t.Fatalf("after SIGHUP: %q, want RELOADING=1", got)
	}
	if got := daemontest.NextNotification(t, conn); !strings.HasPrefix(got, "READY=1\n") {
		t.Fatalf("after the reload: %q, want READY=1", got)
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	if got := daemontest.NextNotification(t, conn); !strings.HasPrefix(got, "STOPPING=1\n") {
		t.Fatalf("after SIGTERM: %q, want STOPPING=1", got)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cmdRun did not return after SIGTERM")
	}
	if _, err := os.Stat(filepath.Join(dir, "feed.sock")); err == nil {
		t.Fatal("the feed socket is left behind after SIGTERM")
	}
}

// TestRunExitsOnPartFailure: when a part of the running daemon fails for
// good (here its admin listener breaks), queryd exits with status 1, so
// that systemd's Restart=on-failure restarts it.
func TestRunExitsOnPartFailure(t *testing.T) {
	dir := daemontest.Dir(t)
	path := daemontest.WriteConfig(t, dir, "")
	adminPort := testkit.FreeTCPPort(t)
	os.WriteFile(path, []byte(strings.Replace(string(mustReadFile(t, path)), `listen = "127.0.0.1:0"`, fmt.Sprintf(`listen = "127.0.0.1:%d"`, adminPort), 1)), 0o600)
	done := make(chan int, 1)
	go func() { done <- cmdRun([]string{"-config", path}, io.Discard) }()
	admin := fmt.Sprintf("127.0.0.1:%d", adminPort)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if c, err := net.Dial("tcp", admin); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon's admin listener did not come up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	daemontest.BreakListener(t, daemontest.TCPInode(t, admin))
	select {
	case code := <-done:
		if code != 1 {
			t.Fatalf("exit code %d after a part failed, want 1", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cmdRun did not return after a part failed")
	}
	if _, err := os.Stat(filepath.Join(dir, "feed.sock")); err == nil {
		t.Fatal("the feed socket is left behind after a part failed")
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

//go:build linux

package daemon

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testDir is a temp dir short enough for Unix socket paths.
func testDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "qd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// notifyListener is a fake systemd: a unixgram socket at name (a path, or
// "@name" for the abstract namespace) that NOTIFY_SOCKET points at.
func notifyListener(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", name)
	return conn
}

// nextNotification reads one datagram or fails after 5 s.
func nextNotification(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	return string(buf[:n])
}

func TestSDNotifyUnset(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if sent, err := sdNotify("READY=1"); sent || err != nil {
		t.Fatalf("without NOTIFY_SOCKET: sent=%v err=%v, want a silent no-op", sent, err)
	}
}

func TestSDNotifyPathSocket(t *testing.T) {
	conn := notifyListener(t, filepath.Join(testDir(t), "notify"))
	if sent, err := sdNotify("READY=1\nSTATUS=x"); !sent || err != nil {
		t.Fatalf("sent=%v err=%v", sent, err)
	}
	if got := nextNotification(t, conn); got != "READY=1\nSTATUS=x" {
		t.Fatalf("got %q", got)
	}
}

func TestSDNotifyAbstractSocket(t *testing.T) {
	name := fmt.Sprintf("@queryd-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	conn := notifyListener(t, name)
	if _, err := sdNotify("STOPPING=1"); err != nil {
		t.Fatal(err)
	}
	if got := nextNotification(t, conn); got != "STOPPING=1" {
		t.Fatalf("got %q", got)
	}
	if _, err := os.Stat(name); err == nil {
		t.Fatal("an abstract name must not create a file")
	}
}

func TestSDNotifyErrors(t *testing.T) {
	for _, v := range []string{"relative/path", filepath.Join(testDir(t), "nobody-listens")} {
		t.Setenv("NOTIFY_SOCKET", v)
		if sent, err := sdNotify("READY=1"); sent || err == nil {
			t.Errorf("NOTIFY_SOCKET=%q: sent=%v err=%v, want an error", v, sent, err)
		}
	}
}

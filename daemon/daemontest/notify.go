package daemontest

import (
	"net"
	"testing"
	"time"
)

// NotifyListener is a fake systemd: a unixgram socket at name (a path, or
// "@name" for the abstract namespace) that $NOTIFY_SOCKET points at for
// the rest of the test.
func NotifyListener(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", name)
	return conn
}

// NextNotification reads one notification or fails the test after 5 s.
func NextNotification(t testing.TB, conn *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	return string(buf[:n])
}

package daemon_test

import (
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/daemontest"
)

// TestFeedFailureStopsDaemon: the feed's listener breaks under it (accept
// fails with an error no backoff waits out): the daemon stops with the
// feed's error instead of running on without a feed.
func TestFeedFailureStopsDaemon(t *testing.T) {
	d := daemontest.StartFile(t, mods(echoModule{}), daemontest.WriteConfig(t, daemontest.Dir(t), ""))
	// The feed's accept must wait in the kernel for the shutdown to end
	// it: put the socket in blocking mode, let the feed serve a connection
	// (its next accept then blocks in the kernel), then shut it down.
	inode := daemontest.UnixInode(t, d.Socket)
	daemontest.BlockListener(t, inode)
	if _, err := d.Feed(t).Ping(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	daemontest.BreakListener(t, inode)
	err := runFails(t, d)
	if err == nil || !strings.HasPrefix(err.Error(), "feed: ") {
		t.Fatalf("Run after the feed's listener broke: %v, want the feed's error", err)
	}
}

// TestAdminFailureStopsDaemon: likewise for the admin listener.
func TestAdminFailureStopsDaemon(t *testing.T) {
	d := daemontest.StartFile(t, mods(echoModule{}), daemontest.WriteConfig(t, daemontest.Dir(t), ""))
	daemontest.BreakListener(t, daemontest.TCPInode(t, d.AdminAddr()))
	err := runFails(t, d)
	if err == nil || !strings.HasPrefix(err.Error(), "admin: ") {
		t.Fatalf("Run after the admin listener broke: %v, want the admin server's error", err)
	}
}

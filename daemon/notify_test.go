//go:build linux

package daemon_test

import (
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"

	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSDNotifyUnset(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if sent, err := daemon.SDNotify("READY=1"); sent || err != nil {
		t.Fatalf("without NOTIFY_SOCKET: sent=%v err=%v, want a silent no-op", sent, err)
	}
}

func TestSDNotifyPathSocket(t *testing.T) {
	conn := daemontest.NotifyListener(t, filepath.Join(daemontest.Dir(t), "notify"))
	if sent, err := daemon.SDNotify("READY=1\nSTATUS=x"); !sent || err != nil {
		t.Fatalf("sent=%v err=%v", sent, err)
	}
	if got := daemontest.NextNotification(t, conn); got != "READY=1\nSTATUS=x" {
		t.Fatalf("got %q", got)
	}
}

func TestSDNotifyAbstractSocket(t *testing.T) {
	name := fmt.Sprintf("@queryd-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	conn := daemontest.NotifyListener(t, name)
	if _, err := daemon.SDNotify("STOPPING=1"); err != nil {
		t.Fatal(err)
	}
	if got := daemontest.NextNotification(t, conn); got != "STOPPING=1" {
		t.Fatalf("got %q", got)
	}
	if _, err := os.Stat(name); err == nil {
		t.Fatal("an abstract name must not create a file")
	}
}

func TestSDNotifyErrors(t *testing.T) {
	for _, v := range []string{"relative/path", filepath.Join(daemontest.Dir(t), "nobody-listens")} {
		t.Setenv("NOTIFY_SOCKET", v)
		if sent, err := daemon.SDNotify("READY=1"); sent || err == nil {
			t.Errorf("NOTIFY_SOCKET=%q: sent=%v err=%v, want an error", v, sent, err)
		}
	}
}

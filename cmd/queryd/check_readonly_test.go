package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
)

// TestCheckChangesNothing: queryd check beside a running daemon (what the
// units' ExecReload= does on every `systemctl reload`) only looks. A
// server never fed keeps answering [server] past stale_after (before, the
// check's ping armed the stale timer and it fell silent for good), and a
// server silent because its feeder went away stays silent (before, the
// ping revived the dead game's last state for stale_after).
func TestCheckChangesNothing(t *testing.T) {
	t.Parallel() // waits on timeouts and processes, not on the CPU
	dir := testDir(t)
	text := strings.Replace(daemontest.Base(dir), `stale_after = "60s"`, `stale_after = "1s"`, 1)
	path := filepath.Join(dir, "running.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startTestDaemon(t, path)
	check := func() {
		t.Helper()
		if code, out, errOut := run(t, "", "check", path); code != 0 {
			t.Fatalf("check: exit %d\n%s%s", code, out, errOut)
		}
	}
	check()
	time.Sleep(1500 * time.Millisecond)
	if s := d.Silence(); s.State != daemon.StateNotFed {
		t.Fatalf("never fed, after a check and stale_after: %+v (want not_fed)", s)
	}

	fc := d.Feed(t)
	if _, err := fc.Replace(map[string]any{"name": "the game"}); err != nil {
		t.Fatal(err)
	}
	fc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for d.Silence().State != daemon.StateSilent {
		if time.Now().After(deadline) {
			t.Fatalf("the feeder gone: not silent after stale_after: %+v", d.Silence())
		}
		time.Sleep(50 * time.Millisecond)
	}
	check()
	if s := d.Silence(); s.State != daemon.StateSilent || s.Reason != daemon.ReasonFeed {
		t.Fatalf("a check revived a server whose feeder is gone: %+v", s)
	}
}

// TestCheckFeedHTTPAddress: a [feed] http address another process holds is
// an error of check's, as [listen] udp and [admin] listen are (before, it
// passed and the start failed).
func TestCheckFeedHTTPAddress(t *testing.T) {
	dir := testDir(t)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	held := tcp.Addr().String()
	text := loopbackConfig(dir, "127.0.0.1:0", "127.0.0.1:0")
	text = strings.Replace(text, "[feed]\n", "[feed]\n"+feedHTTPConfig(t, dir, held, feedToken), 1)
	code, errOut := checkConfig(t, dir, text)
	if code != 1 || !strings.Contains(errOut, "feed.http: "+held+": in use by another process") {
		t.Errorf("[feed] http held: exit %d\n%s", code, errOut)
	}
	text = loopbackConfig(dir, "127.0.0.1:0", "127.0.0.1:0") + "[sagl]\nenabled = true\nhttp = \"" + held + "\"\n"
	code, errOut = checkConfig(t, dir, text)
	if code != 1 || !strings.Contains(errOut, "sagl.http: "+held+": in use by another process") {
		t.Errorf("[sagl] http held: exit %d\n%s", code, errOut)
	}
}

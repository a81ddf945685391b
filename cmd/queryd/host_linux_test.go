package main

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/daemontest"
)

// TestHostServerFailureStopsOnlyIt: one server's feed listener breaks
// under it (accept fails for good): that server stops alone — its port
// closed, /healthz naming it down — while the others answer and the
// daemon runs on; SIGHUP starts it again.
func TestHostServerFailureStopsOnlyIt(t *testing.T) {
	path := writeHost(t, "alpha", "bravo", "charlie")
	d := startHost(t, path)
	bravo := serverAddr(t, d, "bravo")
	inode := daemontest.UnixInode(t, d.Server("bravo").FeedPath())
	daemontest.BlockListener(t, inode)
	if _, err := feedServer(t, d, "bravo").Ping(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	daemontest.BreakListener(t, inode)
	deadline := time.Now().Add(5 * time.Second)
	for d.Server("bravo") != nil {
		if time.Now().After(deadline) {
			t.Fatal("bravo still runs 5 s after its feed listener broke")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-d.Done():
		t.Fatalf("the daemon stopped: %v", err)
	default:
	}
	wantName(t, d, "alpha", "Server alpha")
	wantName(t, d, "charlie", "Server charlie")
	if c, err := net.ListenPacket("udp", bravo); err != nil {
		t.Errorf("bravo's port still held after it stopped: %v", err)
	} else {
		c.Close()
	}
	code, h := getJSON(t, d, "/healthz/bravo")
	if code != http.StatusServiceUnavailable || h["reason"] != "down" || !strings.HasPrefix(h["error"].(string), "feed: ") {
		t.Errorf("/healthz/bravo %d %v, want 503 down with the feed's error", code, h)
	}
	if code, _ := getJSON(t, d, "/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz %d with bravo down, want 503", code)
	}
	d.Reload()
	wantName(t, d, "bravo", "Server bravo")
	if got := d.ServerNames(); !slices.Equal(got, []string{"alpha", "bravo", "charlie"}) {
		t.Errorf("servers after the reload %v", got)
	}
}

// TestHostRemovedServerFlatlines: a server with a Quake 3 master whose
// file is removed sends the master its flatline when SIGHUP stops it.
func TestHostRemovedServerFlatlines(t *testing.T) {
	master, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	path := writeHost(t, "alpha")
	dir := filepath.Dir(path)
	writeServer(t, dir, "quake", `[quake3]
gamename = "mygame"
query_port_is_join_port = true
[[quake3.masters]]
address = "`+master.LocalAddr().String()+`"
heartbeat = "DarkPlaces"
flatline = "ETFlatline-1"
`)
	d := startHost(t, path)
	buf := make([]byte, 2048)
	master.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := master.ReadFromUDP(buf)
	if err != nil || string(buf[:n]) != "\xff\xff\xff\xffheartbeat DarkPlaces\n" {
		t.Fatalf("first heartbeat: %q %v", buf[:n], err)
	}
	os.Remove(filepath.Join(dir, "servers.d", "quake.toml"))
	d.Reload()
	master.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err = master.ReadFromUDP(buf)
	if err != nil || string(buf[:n]) != "\xff\xff\xff\xffheartbeat ETFlatline-1\n" {
		t.Fatalf("after the removal: %q %v, want the flatline", buf[:n], err)
	}
	if d.Server("quake") != nil {
		t.Error("quake still runs")
	}
	wantName(t, d, "alpha", "Server alpha")
}

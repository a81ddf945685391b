package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/feed"
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

// writeConfig writes a loopback config (UDP and admin on port 0) with extra
// TOML appended, and returns its path.
func writeConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	cfg := `
[listen]
udp = ["127.0.0.1:0"]
workers = 2
[feed]
socket = "` + filepath.Join(dir, "feed.sock") + `"
stale_after = "60s"
[admin]
listen = "127.0.0.1:0"
[server]
name = "config name"
map = "config_map"
max_players = 10
` + extra
	path := filepath.Join(dir, "queryd.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startDaemonNoCleanup starts a daemon the test stops itself.
func startDaemonNoCleanup(t *testing.T, path string) *daemon {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := startDaemon(cfg, path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func startTestDaemon(t *testing.T, path string) *daemon {
	t.Helper()
	d := startDaemonNoCleanup(t, path)
	t.Cleanup(d.stop)
	return d
}

func a2sClient(t *testing.T, d *daemon) *a2s.Client {
	t.Helper()
	c, err := a2s.Dial(d.udp.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestFeedThenQuery(t *testing.T) {
	dir := testDir(t)
	d := startTestDaemon(t, writeConfig(t, dir, ""))
	c := a2sClient(t, d)
	info, err := c.Info()
	if err != nil || info.Name != "config name" || info.Players != 0 {
		t.Fatalf("before feeding: %+v %v", info, err)
	}
	fc, err := feed.Dial(filepath.Join(dir, "feed.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	_, err = fc.Replace(map[string]any{
		"name": "Fed Server", "map": "de_dust2", "max_players": 32,
		"players": map[string]any{"0": map[string]any{"name": "Thomas", "score": 12}, "3": map[string]any{"name": "Sam", "score": 4}},
		"rules":   map[string]any{"mp_timelimit": "30"},
	})
	if err != nil {
		t.Fatal(err)
	}
	info, _ = c.Info()
	if info.Name != "Fed Server" || info.Map != "de_dust2" || info.Players != 2 || info.MaxPlayers != 32 {
		t.Fatalf("after replace: %+v", info)
	}
	ps, err := c.Players()
	if err != nil || len(ps) != 2 || ps[0].Name != "Thomas" || ps[1].Score != 4 {
		t.Fatalf("players %+v %v", ps, err)
	}
	rules, err := c.Rules()
	if err != nil || len(rules) != 1 || rules[0] != [2]string{"mp_timelimit", "30"} {
		t.Fatalf("rules %v %v", rules, err)
	}
	fc.Patch(map[string]any{"players": map[string]any{"0": nil}, "map": "cs_office"})
	info, _ = c.Info()
	ps, _ = c.Players()
	if info.Map != "cs_office" || info.Players != 1 || len(ps) != 1 || ps[0].Name != "Sam" {
		t.Fatalf("after patch: %+v %+v", info, ps)
	}
}

func TestReload(t *testing.T) {
	dir := testDir(t)
	path := writeConfig(t, dir, "")
	d := startTestDaemon(t, path)
	fc, err := feed.Dial(filepath.Join(dir, "feed.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	fc.Patch(map[string]any{"map": "fed_map"})
	c := a2sClient(t, d)

	os.WriteFile(path, []byte("this is not toml ["), 0o600)
	d.reload()
	if info, err := c.Info(); err != nil || info.Name != "config name" {
		t.Fatalf("after a bad reload: %+v %v", info, err)
	}

	writeConfig(t, dir, "[a2s]\napp_id = 4000\n")
	os.WriteFile(path, bytes.Replace(mustRead(t, path), []byte(`"config name"`), []byte(`"reloaded name"`), 1), 0o600)
	d.reload()
	info, err := c.Info()
	if err != nil || info.Name != "reloaded name" || info.Map != "fed_map" || info.AppID != 4000 {
		t.Fatalf("after reload: %+v %v (want the new [server] name, the fed map, the new app id)", info, err)
	}

	writeConfig(t, dir, "[a2s]\nenabled = false\n")
	d.reload()
	c.Timeout = 300 * time.Millisecond
	if _, err := c.Info(); err == nil {
		t.Fatal("A2S still answers after being disabled by a reload")
	}
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStaleFeedSilencesEverything(t *testing.T) {
	dir := testDir(t)
	path := writeConfig(t, dir, "")
	os.WriteFile(path, bytes.Replace(mustRead(t, path), []byte(`"60s"`), []byte(`"300ms"`), 1), 0o600)
	d := startTestDaemon(t, path)
	c := a2sClient(t, d)
	c.Timeout = 300 * time.Millisecond
	time.Sleep(400 * time.Millisecond)
	if _, err := c.Info(); err != nil {
		t.Fatal("a feed that never spoke must not make queryd silent")
	}
	fc, err := feed.Dial(filepath.Join(dir, "feed.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	fc.Ping()
	time.Sleep(450 * time.Millisecond)
	if _, err := c.Info(); err == nil {
		t.Fatal("answered while the feed is stale")
	}
	resp, err := http.Get("http://" + d.admin.ln.Addr().String() + "/healthz")
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("healthz while stale: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	fc.Ping()
	if _, err := c.Info(); err != nil {
		t.Fatal("not answering after the feed spoke again")
	}
}

func TestAdminEndpoints(t *testing.T) {
	d := startTestDaemon(t, writeConfig(t, testDir(t), ""))
	a2sClient(t, d).Info()
	base := "http://" + d.admin.ln.Addr().String()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`queryd_requests_total{outcome="challenged",protocol="a2s"} 1`, "queryd_state_version 1", "go_goroutines"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	resp, err = http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if resp.StatusCode != 200 || h["ok"] != true {
		t.Fatalf("healthz %d %v", resp.StatusCode, h)
	}
}

func TestStopRemovesSocket(t *testing.T) {
	dir := testDir(t)
	cfg, err := config.Load(writeConfig(t, dir, ""))
	if err != nil {
		t.Fatal(err)
	}
	d, err := startDaemon(cfg, "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "feed.sock")
	if _, err := os.Stat(sock); err != nil {
		t.Fatal(err)
	}
	d.stop()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatal("the feed socket survived shutdown")
	}
}

func TestSocketPathOccupiedByFile(t *testing.T) {
	dir := testDir(t)
	os.WriteFile(filepath.Join(dir, "feed.sock"), []byte("precious"), 0o600)
	cfg, err := config.Load(writeConfig(t, dir, ""))
	if err != nil {
		t.Fatal(err)
	}
	_, err = startDaemon(cfg, "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "regular file") {
		t.Fatalf("want a clear error, got %v", err)
	}
	if string(mustRead(t, filepath.Join(dir, "feed.sock"))) != "precious" {
		t.Fatal("the file was touched")
	}
}

// TestPartFailureExitsNonZero: a part that stops for good (the feed's
// accept loop on an error it cannot wait out) ends the run with status 1,
// so that a supervisor (systemd Restart=on-failure) restarts queryd instead
// of leaving it running deaf.
func TestPartFailureExitsNonZero(t *testing.T) {
	d := startTestDaemon(t, writeConfig(t, testDir(t), ""))
	sigs := make(chan os.Signal)
	d.fail(errors.New("feed stopped: broken"))
	d.fail(errors.New("a second failure is dropped, not blocking"))
	done := make(chan int)
	go func() { done <- d.wait(sigs) }()
	select {
	case status := <-done:
		if status != 1 {
			t.Fatalf("status %d after a part failed, want 1", status)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("wait did not return after a part failed")
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/testkit"
	"github.com/queryd/queryd/module"
)

// Host mode against the running daemon: a main file with only host-wide
// tables and server files in servers.d/, each server on its own loopback
// port and feed socket, asked by the real clients of the registration list.

// hostMain is a main file that is no server: the admin listener and the
// include.
const hostMain = `
[admin]
listen = "127.0.0.1:0"
[servers]
include = ["servers.d/*.toml"]
`

// serverFile is the server file of name: its own port, feed socket and
// name ("Server NAME"); extra is appended.
func serverFile(dir, name, extra string) string {
	return fmt.Sprintf(`
[listen]
udp = ["127.0.0.1:0"]
workers = 1
[feed]
socket = %q
stale_after = "60s"
[server]
name = "Server %s"
map = "map_%s"
max_players = 8
`, filepath.Join(dir, name+".sock"), name, name) + extra
}

// writeHost writes the main file and one server file per name in a fresh
// folder and returns the main file's path.
func writeHost(t *testing.T, names ...string) string {
	t.Helper()
	dir := testDir(t)
	if err := os.Mkdir(filepath.Join(dir, "servers.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		writeServer(t, dir, n, "")
	}
	path := filepath.Join(dir, "queryd.toml")
	if err := os.WriteFile(path, []byte(hostMain), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeServer (re)writes server name's file in dir.
func writeServer(t *testing.T, dir, name, extra string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "servers.d", name+".toml"), []byte(serverFile(dir, name, extra)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startHost runs the daemon in host mode on the main file at path until the
// test ends.
func startHost(t *testing.T, path string) *daemontest.Daemon {
	t.Helper()
	d := daemontest.StartHost(t, daemonModules(), path)
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("the daemon stopped with an error: %v", err)
		}
	})
	return d
}

// askProto asks addr the protocol's whole query with the registration
// list's client.
func askProto(t *testing.T, proto, addr string, wait time.Duration) (module.Summary, error) {
	t.Helper()
	for _, m := range modules {
		if m.Name() == proto {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			a, err := m.Query(ctx, addr, module.QueryOptions{})
			return a.Summary, err
		}
	}
	t.Fatalf("no module %s", proto)
	return module.Summary{}, nil
}

// serverAddr is server name's first UDP address.
func serverAddr(t *testing.T, d *daemontest.Daemon, name string) string {
	t.Helper()
	s := d.Server(name)
	if s == nil {
		t.Fatalf("server %s is not running (running: %v)", name, d.ServerNames())
	}
	return s.UDPAddrs()[0].String()
}

// wantName asserts that server name answers A2S and GameSpy4 with want.
func wantName(t *testing.T, d *daemontest.Daemon, name, want string) {
	t.Helper()
	addr := serverAddr(t, d, name)
	for _, proto := range []string{"a2s", "gamespy4"} {
		sum, err := askProto(t, proto, addr, 3*time.Second)
		if err != nil {
			t.Errorf("%s %s (%s): %v", name, proto, addr, err)
			continue
		}
		if sum.Name != want {
			t.Errorf("%s %s: name %q, want %q", name, proto, sum.Name, want)
		}
	}
}

// feedServer connects to server name's feed socket.
func feedServer(t *testing.T, d *daemontest.Daemon, name string) *feed.Client {
	t.Helper()
	c, err := feed.Dial(d.Server(name).FeedPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// getJSON GETs the admin path and decodes its JSON body.
func getJSON(t *testing.T, d *daemontest.Daemon, path string) (int, map[string]any) {
	t.Helper()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + d.AdminAddr() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v: %s", path, err, b)
	}
	return res.StatusCode, m
}

// metricsText is /metrics.
func metricsText(t *testing.T, d *daemontest.Daemon) string {
	t.Helper()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + d.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// TestHostServersAnswerOwnState: three server files, one process: each port
// answers A2S and GameSpy4 with its own server's name; feeding one server's
// socket changes that server only; /healthz is 200 with every server named;
// the metrics carry each server's label.
func TestHostServersAnswerOwnState(t *testing.T) {
	d := startHost(t, writeHost(t, "alpha", "bravo", "charlie"))
	if got := d.ServerNames(); !slices.Equal(got, []string{"alpha", "bravo", "charlie"}) {
		t.Fatalf("servers %v", got)
	}
	for _, n := range []string{"alpha", "bravo", "charlie"} {
		wantName(t, d, n, "Server "+n)
	}
	if _, err := feedServer(t, d, "bravo").Patch(map[string]any{"name": "bravo fed"}); err != nil {
		t.Fatal(err)
	}
	wantName(t, d, "bravo", "bravo fed")
	wantName(t, d, "alpha", "Server alpha")
	wantName(t, d, "charlie", "Server charlie")

	code, h := getJSON(t, d, "/healthz")
	servers, _ := h["servers"].(map[string]any)
	if code != http.StatusOK || h["ok"] != true || len(servers) != 3 {
		t.Errorf("/healthz %d %v", code, h)
	}
	if code, h := getJSON(t, d, "/healthz/bravo"); code != http.StatusOK || h["version"] != 2.0 {
		t.Errorf("/healthz/bravo %d %v, want 200 at state version 2 (the base, then one feed change)", code, h)
	}
	if code, _ := getJSON(t, d, "/healthz/nope"); code != http.StatusNotFound {
		t.Errorf("/healthz/nope %d, want 404", code)
	}
	m := metricsText(t, d)
	for _, want := range []string{`queryd_state_version{server="alpha"} 1`, `queryd_state_version{server="bravo"} 2`,
		`queryd_requests_total{outcome="answered",protocol="a2s",server="charlie"}`, `queryd_feed_stale{server="alpha"} 0`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(m, "queryd_state_version 1") || strings.Contains(m, `go_goroutines{server=`) {
		t.Errorf("/metrics has a per-server series without its label, or a host series with one")
	}
	if code, l := getJSON(t, d, "/servers.json"); code != http.StatusOK || len(l["servers"].([]any)) != 3 {
		t.Errorf("/servers.json %d %v", code, l)
	}
	if code, r := getJSON(t, d, "/status.json?server=charlie"); code != http.StatusOK || r["server"].(map[string]any)["name"] != "Server charlie" {
		t.Errorf("/status.json?server=charlie %d %v", code, r["server"])
	}
	if code, _ := getJSON(t, d, "/status.json?server=nope"); code != http.StatusNotFound {
		t.Errorf("/status.json?server=nope %d, want 404", code)
	}
}

// TestHostStaleFeedSilencesOneServer: one server's feed goes stale: that
// server answers nothing and /healthz/NAME and /healthz say 503 naming it;
// the others answer and are 200.
func TestHostStaleFeedSilencesOneServer(t *testing.T) {
	t.Parallel() // waits on timeouts and processes, not on the CPU
	path := writeHost(t, "alpha", "charlie")
	dir := filepath.Dir(path)
	writeServer(t, dir, "bravo", "")
	b, _ := os.ReadFile(filepath.Join(dir, "servers.d", "bravo.toml"))
	os.WriteFile(filepath.Join(dir, "servers.d", "bravo.toml"), []byte(strings.Replace(string(b), `stale_after = "60s"`, `stale_after = "1s"`, 1)), 0o600)
	d := startHost(t, path)
	if _, err := feedServer(t, d, "bravo").Ping(); err != nil { // the feed spoke: stale 1 s after
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !d.Server("bravo").Silence().Silent {
		if time.Now().After(deadline) {
			t.Fatal("bravo's feed not stale 10 s after its last message")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := askProto(t, "a2s", serverAddr(t, d, "bravo"), 500*time.Millisecond); err == nil {
		t.Error("bravo answered A2S while its feed is stale")
	}
	wantName(t, d, "alpha", "Server alpha")
	wantName(t, d, "charlie", "Server charlie")
	if code, h := getJSON(t, d, "/healthz/bravo"); code != http.StatusServiceUnavailable || h["reason"] != "feed" {
		t.Errorf("/healthz/bravo %d %v, want 503 with reason feed", code, h)
	}
	if code, _ := getJSON(t, d, "/healthz/alpha"); code != http.StatusOK {
		t.Errorf("/healthz/alpha %d, want 200", code)
	}
	code, h := getJSON(t, d, "/healthz")
	bravo, _ := h["servers"].(map[string]any)["bravo"].(map[string]any)
	if code != http.StatusServiceUnavailable || bravo["ok"] != false || bravo["reason"] != "feed" {
		t.Errorf("/healthz %d %v, want 503 naming bravo", code, h)
	}
	if m := metricsText(t, d); !strings.Contains(m, `queryd_silent{server="bravo"} 1`) || !strings.Contains(m, `queryd_silent{server="alpha"} 0`) {
		t.Errorf("queryd_silent by server:\n%s", grepLines(m, "queryd_silent"))
	}
}

// TestHostSighup: adding a file and reloading starts that server; removing
// one stops it and closes its sockets; a broken file keeps its server's
// running config while the others' changes apply; a file broken at start
// is not started and /healthz names it.
func TestHostSighup(t *testing.T) {
	path := writeHost(t, "alpha", "bravo", "charlie")
	dir := filepath.Dir(path)
	d := startHost(t, path)
	charlie := serverAddr(t, d, "charlie")
	charlieSock := d.Server("charlie").FeedPath()

	writeServer(t, dir, "delta", "")
	os.Remove(filepath.Join(dir, "servers.d", "charlie.toml"))
	os.WriteFile(filepath.Join(dir, "servers.d", "bravo.toml"), []byte("[listen\nbroken"), 0o600)
	writeServer(t, dir, "alpha", "")
	b, _ := os.ReadFile(filepath.Join(dir, "servers.d", "alpha.toml"))
	os.WriteFile(filepath.Join(dir, "servers.d", "alpha.toml"), []byte(strings.Replace(string(b), `name = "Server alpha"`, `name = "alpha reloaded"`, 1)), 0o600)
	d.Reload()

	if got := d.ServerNames(); !slices.Equal(got, []string{"alpha", "delta", "bravo"}) {
		t.Errorf("servers after the reload %v, want alpha, delta and bravo (kept on its running config)", got)
	}
	wantName(t, d, "delta", "Server delta")
	wantName(t, d, "alpha", "alpha reloaded")
	wantName(t, d, "bravo", "Server bravo")
	// charlie's sockets are closed: its port and feed path are free.
	c, err := net.ListenPacket("udp", charlie)
	if err != nil {
		t.Errorf("charlie's UDP port still held after its removal: %v", err)
	} else {
		c.Close()
	}
	if _, err := feed.Dial(charlieSock); err == nil {
		t.Error("charlie's feed socket still accepts after its removal")
	}
	if code, _ := getJSON(t, d, "/healthz/charlie"); code != http.StatusNotFound {
		t.Errorf("/healthz/charlie after its removal: %d, want 404", code)
	}
	if code, _ := getJSON(t, d, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d with bravo running on its last good config", code)
	}
	if strings.Contains(metricsText(t, d), `server="charlie"`) {
		t.Error("charlie's series outlive it")
	}
}

// TestHostBrokenAtStart: a server file refused at start (a parse error) is
// not started and /healthz names it with 503; a server whose port is taken
// cannot start and is reported the same; the others answer; fixing the
// files and reloading starts both.
func TestHostBrokenAtStart(t *testing.T) {
	path := writeHost(t, "alpha")
	dir := filepath.Dir(path)
	os.WriteFile(filepath.Join(dir, "servers.d", "bravo.toml"), []byte("[listen\nbroken"), 0o600)
	taken, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	b := strings.Replace(serverFile(dir, "charlie", ""), `udp = ["127.0.0.1:0"]`, fmt.Sprintf("udp = [%q]", taken.LocalAddr().String()), 1)
	os.WriteFile(filepath.Join(dir, "servers.d", "charlie.toml"), []byte(b), 0o600)
	d := startHost(t, path)
	wantName(t, d, "alpha", "Server alpha")
	code, h := getJSON(t, d, "/healthz")
	servers, _ := h["servers"].(map[string]any)
	for _, n := range []string{"bravo", "charlie"} {
		s, _ := servers[n].(map[string]any)
		if s["ok"] != false || s["error"] == nil {
			t.Errorf("/healthz on %s: %v", n, s)
		}
		if code, _ := getJSON(t, d, "/healthz/"+n); code != http.StatusServiceUnavailable {
			t.Errorf("/healthz/%s %d, want 503", n, code)
		}
	}
	if code != http.StatusServiceUnavailable {
		t.Errorf("/healthz %d, want 503", code)
	}
	taken.Close()
	writeServer(t, dir, "bravo", "")
	os.WriteFile(filepath.Join(dir, "servers.d", "charlie.toml"), []byte(b), 0o600)
	d.Reload()
	wantName(t, d, "bravo", "Server bravo")
	wantName(t, d, "charlie", "Server charlie")
	if code, _ := getJSON(t, d, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d after the fix, want 200", code)
	}
}

// TestHostMainBecomesHost: a one-server config (the main file is the
// server "main") gains [servers] include and a server file; after SIGHUP
// both servers answer, each its own name, and /healthz names both.
func TestHostMainBecomesHost(t *testing.T) {
	dir := testDir(t)
	path := filepath.Join(dir, "queryd.toml")
	one := "[admin]\nlisten = \"127.0.0.1:0\"\n" + serverFile(dir, "main", "")
	if err := os.WriteFile(path, []byte(one), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startHost(t, path)
	wantName(t, d, "main", "Server main")
	if _, h := getJSON(t, d, "/healthz"); h["servers"] != nil {
		t.Errorf("/healthz of one server lists servers: %v", h)
	}
	os.Mkdir(filepath.Join(dir, "servers.d"), 0o700)
	writeServer(t, dir, "extra", "")
	if err := os.WriteFile(path, []byte(one+"[servers]\ninclude = [\"servers.d/*.toml\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.Reload()
	if got := d.ServerNames(); !slices.Equal(got, []string{"main", "extra"}) {
		t.Fatalf("servers %v", got)
	}
	wantName(t, d, "main", "Server main")
	wantName(t, d, "extra", "Server extra")
	code, h := getJSON(t, d, "/healthz")
	if servers, _ := h["servers"].(map[string]any); code != http.StatusOK || len(servers) != 2 {
		t.Errorf("/healthz %d %v, want 200 naming main and extra", code, h)
	}
}

// TestHostRestartsOneServer: in a host, a server file whose change needs a
// restart ([listen] moved to another port, [feed] to another socket) restarts
// that server alone on SIGHUP: it answers on its new port and takes its feed on
// the new socket, its old port and socket are free; the other server keeps its
// port, its feed connection and its fed state. A restart onto a port that is
// taken leaves the server down, named by /healthz; fixing it and reloading
// starts it.
func TestHostRestartsOneServer(t *testing.T) {
	path := writeHost(t, "alpha", "bravo")
	dir := filepath.Dir(path)
	d := startHost(t, path)
	oldAlpha, oldSock := serverAddr(t, d, "alpha"), d.Server("alpha").FeedPath()
	bravo := serverAddr(t, d, "bravo")
	fb := feedServer(t, d, "bravo")
	if _, err := fb.Replace(map[string]any{"name": "bravo fed", "map": "fed_map", "max_players": 8}); err != nil {
		t.Fatal(err)
	}
	wantName(t, d, "bravo", "bravo fed")

	port := testkit.FreeUDPPort(t)
	newSock := filepath.Join(dir, "alpha-new.sock")
	b := strings.Replace(serverFile(dir, "alpha", ""), `udp = ["127.0.0.1:0"]`, fmt.Sprintf(`udp = ["127.0.0.1:%d"]`, port), 1)
	b = strings.Replace(b, fmt.Sprintf("socket = %q", oldSock), fmt.Sprintf("socket = %q", newSock), 1)
	os.WriteFile(filepath.Join(dir, "servers.d", "alpha.toml"), []byte(b), 0o600)
	d.Reload()

	if got := serverAddr(t, d, "alpha"); got != fmt.Sprintf("127.0.0.1:%d", port) {
		t.Fatalf("alpha after the reload on %s, want 127.0.0.1:%d", got, port)
	}
	wantName(t, d, "alpha", "Server alpha")
	if got := d.Server("alpha").FeedPath(); got != newSock {
		t.Errorf("alpha's feed socket %s, want %s", got, newSock)
	}
	fa, err := feed.Dial(newSock)
	if err != nil {
		t.Fatalf("alpha's new feed socket: %v", err)
	}
	defer fa.Close()
	if _, err := fa.Replace(map[string]any{"name": "alpha fed again", "map": "m", "max_players": 8}); err != nil {
		t.Fatal(err)
	}
	wantName(t, d, "alpha", "alpha fed again")
	if c, err := net.ListenPacket("udp", oldAlpha); err != nil {
		t.Errorf("alpha's old port still held after its restart: %v", err)
	} else {
		c.Close()
	}
	if _, err := feed.Dial(oldSock); err == nil {
		t.Error("alpha's old feed socket still accepts after its restart")
	}
	// bravo: the same port, its feed connection and its state kept
	if got := serverAddr(t, d, "bravo"); got != bravo {
		t.Errorf("bravo moved from %s to %s", bravo, got)
	}
	if _, err := fb.Patch(map[string]any{"map": "still_fed"}); err != nil {
		t.Errorf("bravo's feed connection after alpha's restart: %v", err)
	}
	wantName(t, d, "bravo", "bravo fed")

	taken, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	moved := strings.Replace(b, fmt.Sprintf("127.0.0.1:%d", port), taken.LocalAddr().String(), 1)
	os.WriteFile(filepath.Join(dir, "servers.d", "alpha.toml"), []byte(moved), 0o600)
	d.Reload()
	if code, _ := getJSON(t, d, "/healthz/alpha"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz/alpha %d after a restart onto a taken port, want 503", code)
	}
	wantName(t, d, "bravo", "bravo fed")
	taken.Close()
	d.Reload()
	wantName(t, d, "alpha", "Server alpha")
	if code, _ := getJSON(t, d, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d after the port was freed, want 200", code)
	}
}

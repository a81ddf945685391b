package daemon_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/module"
)

// mods is the daemon's tests' registration list: the echo module only.
func mods(m echoModule) []daemon.Module { return []daemon.Module{m} }

// ask sends an ECHO datagram to d and returns the answer ("" on none
// within wait).
func ask(t *testing.T, d *daemontest.Daemon, wait time.Duration) string {
	t.Helper()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(d.UDP()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("ECHO"))
	c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

func TestFeedThenQuery(t *testing.T) {
	d := daemontest.Start(t, mods(echoModule{}), "")
	if got := ask(t, d, time.Second); got != "name=config name" {
		t.Fatalf("before feeding: %q", got)
	}
	fc := d.Feed(t)
	if _, err := fc.Replace(map[string]any{"name": "Fed Server"}); err != nil {
		t.Fatal(err)
	}
	if got := ask(t, d, time.Second); got != "name=Fed Server" {
		t.Fatalf("after replace: %q", got)
	}
	if got := d.Protocols(); len(got) != 1 || got[0] != "echo" {
		t.Fatalf("protocols %v", got)
	}
}

func TestReload(t *testing.T) {
	d := daemontest.Start(t, mods(echoModule{}), "")
	d.Feed(t).Patch(map[string]any{"map": "fed_map"})

	os.WriteFile(d.ConfigPath, []byte("this is not toml ["), 0o600)
	d.Reload()
	if got := ask(t, d, time.Second); got != "name=config name" {
		t.Fatalf("after a bad reload: %q", got)
	}
	daemontest.WriteConfig(t, d.Dir, "[echo]\nprefix = \"hi \"\n")
	os.WriteFile(d.ConfigPath, bytes.Replace(mustRead(t, d.ConfigPath), []byte(`"config name"`), []byte(`"reloaded name"`), 1), 0o600)
	d.Reload()
	if got := ask(t, d, time.Second); got != "hi reloaded name" {
		t.Fatalf("after reload: %q, want the new prefix and [server] name", got)
	}
	daemontest.WriteConfig(t, d.Dir, "[echo]\nprefix = \"this is far too long\"\n")
	d.Reload()
	if got := ask(t, d, time.Second); got != "hi config name" && got != "hi reloaded name" {
		t.Fatalf("after a reload the module's Check refused: %q, want the running config", got)
	}
	daemontest.WriteConfig(t, d.Dir, "[echo]\nenabled = false\n")
	d.Reload()
	if got := ask(t, d, 300*time.Millisecond); got != "" {
		t.Fatalf("still answers after being disabled by a reload: %q", got)
	}
	if got := d.Protocols(); len(got) != 0 {
		t.Fatalf("protocols after disabling: %v", got)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStaleFeedSilences(t *testing.T) {
	dir := daemontest.Dir(t)
	path := daemontest.WriteConfig(t, dir, "")
	os.WriteFile(path, bytes.Replace(mustRead(t, path), []byte(`"60s"`), []byte(`"300ms"`), 1), 0o600)
	d := daemontest.StartFile(t, mods(echoModule{}), path)
	defer d.Stop()
	time.Sleep(400 * time.Millisecond)
	if ask(t, d, 300*time.Millisecond) == "" {
		t.Fatal("a feed that never spoke must not make queryd silent")
	}
	fc := d.Feed(t)
	fc.Ping()
	time.Sleep(450 * time.Millisecond)
	if got := ask(t, d, 300*time.Millisecond); got != "" {
		t.Fatalf("answered while the feed is stale: %q", got)
	}
	resp, err := http.Get("http://" + d.AdminAddr() + "/healthz")
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("healthz while stale: %v %v", resp, err)
	}
	resp.Body.Close()
	fc.Ping()
	if ask(t, d, time.Second) == "" {
		t.Fatal("not answering after the feed spoke again")
	}
}

func TestAdminEndpoints(t *testing.T) {
	d := daemontest.Start(t, mods(echoModule{}), "")
	ask(t, d, time.Second)
	base := "http://" + d.AdminAddr()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`queryd_requests_total{outcome="answered",protocol="echo",server="main"} 1`, `queryd_state_version{server="main"} 1`, "go_goroutines"} {
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
	dir := daemontest.Dir(t)
	d := daemontest.StartFile(t, mods(echoModule{}), daemontest.WriteConfig(t, dir, ""))
	if _, err := os.Stat(d.Socket); err != nil {
		t.Fatal(err)
	}
	if err := d.Stop(); err != nil {
		t.Fatalf("Run after a clean stop: %v", err)
	}
	if _, err := os.Lstat(d.Socket); !os.IsNotExist(err) {
		t.Fatal("the feed socket survived shutdown")
	}
}

// newDaemon makes a daemon from the config at path without running it.
func newDaemon(t *testing.T, path string, m echoModule) (*daemon.Daemon, error) {
	t.Helper()
	cfg, err := config.Load(path, m)
	if err != nil {
		t.Fatal(err)
	}
	return daemon.New(daemon.Options{Config: cfg, Modules: mods(m), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

func TestSocketPathOccupiedByFile(t *testing.T) {
	dir := daemontest.Dir(t)
	sock := filepath.Join(dir, "feed.sock")
	os.WriteFile(sock, []byte("precious"), 0o600)
	_, err := newDaemon(t, daemontest.WriteConfig(t, dir, ""), echoModule{})
	if err == nil || !strings.Contains(err.Error(), "regular file") {
		t.Fatalf("want a clear error, got %v", err)
	}
	if string(mustRead(t, sock)) != "precious" {
		t.Fatal("the file was touched")
	}
}

// TestNewReleasesOnFailure: a part that cannot start (the admin port is
// taken) fails New with the reason, and what New had acquired before it
// (the feed socket, the UDP sockets) is released.
func TestNewReleasesOnFailure(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := daemontest.Dir(t)
	path := daemontest.WriteConfig(t, dir, "")
	os.WriteFile(path, bytes.Replace(mustRead(t, path), []byte(`listen = "127.0.0.1:0"`), []byte(`listen = "`+busy.Addr().String()+`"`), 1), 0o600)
	_, err = newDaemon(t, path, echoModule{})
	if err == nil || !strings.Contains(err.Error(), "admin") {
		t.Fatalf("New with the admin port taken: %v, want an error naming admin", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "feed.sock")); !os.IsNotExist(err) {
		t.Fatal("the feed socket is left behind after New failed")
	}
}

// runFails waits for d to stop by itself and returns Run's error.
func runFails(t *testing.T, d *daemontest.Daemon) error {
	t.Helper()
	select {
	case err := <-d.Done():
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("the daemon did not stop within 5 s of a part failing")
		return nil
	}
}

// TestServiceFailureStopsDaemon: a module's service that fails for good
// stops the daemon: Run returns its error naming the service, and every
// other part stops (the feed socket is removed).
func TestServiceFailureStopsDaemon(t *testing.T) {
	m := echoModule{fail: make(chan error, 1)}
	dir := daemontest.Dir(t)
	d := daemontest.StartFile(t, mods(m), daemontest.WriteConfig(t, dir, "[echo]\nservice = true\n"))
	if ask(t, d, time.Second) == "" {
		t.Fatal("no answer before the failure")
	}
	m.fail <- errors.New("broken on purpose")
	err := runFails(t, d)
	if err == nil || !strings.Contains(err.Error(), "echo-service") || !strings.Contains(err.Error(), "broken on purpose") {
		t.Fatalf("Run after a service failed: %v, want its name and reason", err)
	}
	if _, err := os.Lstat(d.Socket); !os.IsNotExist(err) {
		t.Fatal("the feed socket is left behind after a part failed")
	}
}

// TestServicesOfDisabledModule: the daemon asks every module for its
// services, a disabled one too (Quake 3 heartbeats with [quake3] off in
// relay mode), and gives them the relay's upstream in Env; the module's
// handler stays off.
func TestServicesOfDisabledModule(t *testing.T) {
	up, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	m := echoModule{fail: make(chan error, 1), envs: make(chan module.Env, 1)}
	dir := daemontest.Dir(t)
	d := daemontest.StartFile(t, mods(m), daemontest.WriteConfig(t, dir,
		"[echo]\nenabled = false\nservice = true\n[relay]\nupstream = \""+up.LocalAddr().String()+"\"\n"))
	env := envOf(t, m)
	if want := up.LocalAddr().(*net.UDPAddr).AddrPort(); env.RelayGameServer != want {
		t.Errorf("Env.RelayGameServer %s; want %s", env.RelayGameServer, want)
	}
	if p := d.Protocols(); len(p) != 0 {
		t.Errorf("protocols %v with [echo] off", p)
	}
	m.fail <- errors.New("ran while off")
	if err := runFails(t, d); err == nil || !strings.Contains(err.Error(), "ran while off") {
		t.Fatalf("Run: %v; want the disabled module's service to have run and failed", err)
	}
}

// TestModuleWithoutServices: a module that is not a daemon.Servicer (A2S,
// GameSpy4, SQP, Bedrock: their Services returned nil, nil) is served, and
// asked for no services.
func TestModuleWithoutServices(t *testing.T) {
	m := echoModule{envs: make(chan module.Env, 1)}
	plain := struct{ daemon.Module }{m} // Build and the section, no Services
	if _, ok := any(plain).(daemon.Servicer); ok {
		t.Fatal("the wrapper still has Services")
	}
	d := daemontest.Start(t, []daemon.Module{plain}, "")
	if got := ask(t, d, 2*time.Second); got != "name=config name" {
		t.Fatalf("answer %q", got)
	}
	select {
	case <-m.envs:
		t.Fatal("the daemon asked a module without Services for its services")
	default:
	}
}

// Without relay mode Env.RelayGameServer is the zero address.
func TestEnvWithoutRelay(t *testing.T) {
	m := echoModule{envs: make(chan module.Env, 1)}
	daemontest.Start(t, mods(m), "")
	if env := envOf(t, m); env.RelayGameServer.IsValid() {
		t.Errorf("Env.RelayGameServer %s without [relay]", env.RelayGameServer)
	}
}

// envOf returns the Env m's Services was given at start.
func envOf(t *testing.T, m echoModule) module.Env {
	t.Helper()
	select {
	case env := <-m.envs:
		return env
	case <-time.After(5 * time.Second):
		t.Fatal("the daemon did not ask the module for its services")
		return module.Env{}
	}
}

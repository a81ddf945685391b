package interop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/testkit"
)

// hostServerFile is a server file for host mode: its own UDP address and
// feed socket, A2S and GameSpy4 on, the harness's generous budgets.
func hostServerFile(addr, socket string) string {
	s := fmt.Sprintf(`[listen]
udp = [%q]
workers = 1
[feed]
socket = %q
stale_after = "60s"
[limits]
per_ip_rate = "64MiB"
per_ip_burst = "16MiB"
unproven_rate = "64MiB"
unproven_burst = "16MiB"
[server]
name = "the second server"
max_players = 8
`, addr, socket)
	for _, p := range Protocols {
		s += fmt.Sprintf("[%s]\nenabled = %v\n", p, p == "a2s" || p == "gamespy4")
	}
	return s
}

// TestHostClients: one queryd process runs two servers, the main file's
// and servers.d/second.toml, added while it runs (the file written, then
// a real SIGHUP); each is fed its own state and the real clients (qstat
// and gamedig, A2S and GameSpy4) read each server's own state on its own
// port.
func TestHostClients(t *testing.T) {
	d := StartDaemon(t, Options{
		Protocols: map[string]map[string]any{"a2s": nil, "gamespy4": nil},
		Tables:    map[string]map[string]any{"servers": {"include": []string{"servers.d/*.toml"}}},
	})
	dir := filepath.Dir(d.ConfigPath)
	second := testkit.FreeUDPAddr(t)
	sock := filepath.Join(dir, "second.sock")
	if err := os.Mkdir(filepath.Join(dir, "servers.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "servers.d", "second.toml"), []byte(hostServerFile(second, sock)), 0o600); err != nil {
		t.Fatal(err)
	}
	d.Signal(t, syscall.SIGHUP)
	waitHealthy(t, d, "/healthz/second", 10*time.Second)

	main := RichState()
	d.Replace(t, main.Doc())
	other := gs4State()
	c, err := feed.Dial(sock)
	if err != nil {
		t.Fatalf("the second server's feed: %v", err)
	}
	defer c.Close()
	if _, err := c.Replace(other.Doc()); err != nil {
		t.Fatal(err)
	}
	t.Run("main/qstat", func(t *testing.T) { checkQstat(t, d.UDPAddr, main) })
	t.Run("main/gamedig_valve", func(t *testing.T) { checkGamedigValve(t, d.UDPAddr, main) })
	t.Run("second/qstat_gs4", func(t *testing.T) { gs4Qstat(t, second, other) })
	t.Run("second/gamedig_gamespy3", func(t *testing.T) { gs4Gamedig(t, second, other) })
	t.Run("second/gamedig_valve_name", func(t *testing.T) {
		if name := gamedigName(t, "valve", second); name != other.Name {
			t.Errorf("gamedig valve on the second server: name %q, want %q", name, other.Name)
		}
	})
	t.Run("main/gamedig_gamespy3_name", func(t *testing.T) {
		if name := gs4FromCP1252(t, gamedigName(t, "gamespy3", d.UDPAddr)); name != main.Name { // gamedig reads GameSpy4 text as CP1252
			t.Errorf("gamedig gamespy3 on the main server: name %q, want %q", name, main.Name)
		}
	})
}

// waitHealthy polls the admin path until it answers 200.
func waitHealthy(t *testing.T, d *Daemon, path string, limit time.Duration) {
	t.Helper()
	client := d.HTTPClient(time.Second)
	code := 0
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		res, err := client.Get("http://" + d.AdminAddr + path)
		if err == nil {
			res.Body.Close()
			if code = res.StatusCode; code == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("%s: %d, not 200 within %v", path, code, limit)
}

// gamedigName is the server name gamedig's protocol reads at addr.
func gamedigName(t *testing.T, protocol, addr string) string {
	t.Helper()
	r := RunGamedig(t, protocol, addr, map[string]any{})
	if r.Err != nil {
		t.Fatalf("gamedig %s: %v", protocol, r.Err)
	}
	var g gamedigResult
	if err := json.Unmarshal([]byte(r.Stdout), &g); err != nil {
		t.Fatalf("gamedig output: %v\n%s", err, r.Stdout)
	}
	return g.Name
}

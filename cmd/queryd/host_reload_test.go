package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/testkit"
)

// writeServerAt writes server name's file in dir listening on udp.
func writeServerAt(t *testing.T, dir, name, udp string) {
	t.Helper()
	text := strings.Replace(serverFile(dir, name, ""), `udp = ["127.0.0.1:0"]`, fmt.Sprintf("udp = [%q]", udp), 1)
	if err := os.WriteFile(filepath.Join(dir, "servers.d", name+".toml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// answeredAs asks addr A2S_INFO n times and counts the answers by name.
func answeredAs(t *testing.T, addr string, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for range n {
		sum, err := askProto(t, "a2s", addr, 2*time.Second)
		if err != nil {
			got["(no answer)"]++
			continue
		}
		got[sum.Name]++
	}
	return got
}

// TestHostReloadKeepsWhatRuns (issue 39, 1): a server file added on SIGHUP
// that names a running server's UDP address, sorting before it (aaa), or a
// wildcard over it (zzz), is the one refused: named in /healthz/NAME
// (down) and queryd_server_state{reason="refused"}; the running server
// keeps answering every query (before, aaa took the name's place in glob
// order, bound the address through SO_REUSEPORT and the kernel split the
// queries: 24/40 answered as aaa).
func TestHostReloadKeepsWhatRuns(t *testing.T) {
	path := writeHost(t)
	dir := filepath.Dir(path)
	victim := testkit.FreeUDPAddr(t)
	writeServerAt(t, dir, "victim", victim)
	d := startHost(t, path)
	_, port, _ := net.SplitHostPort(victim)
	writeServerAt(t, dir, "aaa", victim)
	writeServerAt(t, dir, "zzz", "0.0.0.0:"+port)
	d.Reload()
	if got := d.ServerNames(); !slices.Equal(got, []string{"victim"}) {
		t.Fatalf("running after the reload: %v, want victim alone", got)
	}
	if got := answeredAs(t, victim, 40); got["Server victim"] != 40 {
		t.Errorf("40 queries to the victim's address: %v", got)
	}
	metrics := metricsText(t, d)
	for _, name := range []string{"aaa", "zzz"} {
		code, h := getJSON(t, d, "/healthz/"+name)
		if code != http.StatusServiceUnavailable || h["state"] != "down" || !strings.Contains(fmt.Sprint(h["error"]), "overlaps") {
			t.Errorf("/healthz/%s: %d %v", name, code, h)
		}
		if want := fmt.Sprintf(`queryd_server_state{reason="refused",server=%q,state="down"} 1`, name); !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestHostReloadNameBelongsToItsFile (issue 39, 2): a file with a running
// server's name in an earlier include folder is refused, naming both
// files; the server keeps its port and feed socket (before, it was
// restarted from the other file); removing the newcomer changes nothing;
// removing the server's own file stops it.
func TestHostReloadNameBelongsToItsFile(t *testing.T) {
	path := writeHost(t, "arena")
	dir := filepath.Dir(path)
	main := strings.Replace(hostMain, `include = ["servers.d/*.toml"]`, `include = ["early/*.toml", "servers.d/*.toml"]`, 1)
	if err := os.WriteFile(path, []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startHost(t, path)
	addr, sock := serverAddr(t, d, "arena"), d.Server("arena").FeedPath()
	if err := os.Mkdir(filepath.Join(dir, "early"), 0o700); err != nil {
		t.Fatal(err)
	}
	early := filepath.Join(dir, "early", "arena.toml")
	other := strings.Replace(serverFile(dir, "other", ""), `name = "Server other"`, `name = "impostor"`, 1)
	if err := os.WriteFile(early, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	d.Reload()
	if s := d.Server("arena"); s == nil || s.UDPAddrs()[0].String() != addr || s.FeedPath() != sock {
		t.Fatalf("arena after the reload: %v", d.ServerNames())
	}
	wantName(t, d, "arena", "Server arena")
	_, h := getJSON(t, d, "/healthz")
	servers, _ := h["servers"].(map[string]any)
	refused, _ := servers[early].(map[string]any)
	if refused["state"] != "down" || !strings.Contains(fmt.Sprint(refused["error"]), filepath.Join(dir, "servers.d", "arena.toml")) {
		t.Errorf("/healthz: the refused file %s: %v (servers %v)", early, refused, servers)
	}
	os.Remove(early)
	d.Reload()
	wantName(t, d, "arena", "Server arena")
	os.Remove(filepath.Join(dir, "servers.d", "arena.toml"))
	d.Reload()
	if got := d.ServerNames(); len(got) != 0 {
		t.Errorf("running after arena's file was removed: %v", got)
	}
	if c, err := net.ListenPacket("udp", addr); err != nil {
		t.Errorf("arena's port still held: %v", err)
	} else {
		c.Close()
	}
}

package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
)

// reloadHost is ReloadHost of queryd.toml in dir with running.
func reloadHost(t *testing.T, dir string, running []config.HostServer) *config.Host {
	t.Helper()
	h, err := config.ReloadHost(filepath.Join(dir, "queryd.toml"), running, modules...)
	if err != nil {
		t.Fatalf("ReloadHost: %v", err)
	}
	return h
}

// TestReloadHostKeepsWhatRuns (issue 39, 1): a file added on SIGHUP that
// sorts before a running server and names its address, or an address its
// wildcard covers, is the one refused; at a start (LoadHost) the first
// file takes it, as before. A running server's changed file keeps its own
// address; a running server whose file is gone holds nothing.
func TestReloadHostKeepsWhatRuns(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"queryd.toml":    hostMain,
		"s/victim.toml":  udpServer("127.0.0.1:37015", ""),
		"s/wild.toml":    udpServer("0.0.0.0:37016", ""),
		"s/leaving.toml": udpServer("127.0.0.1:37017", ""),
	})
	h, err := config.LoadHost(filepath.Join(dir, "queryd.toml"), modules...)
	if err != nil {
		t.Fatal(err)
	}
	running := h.Servers
	if !slices.Equal(names(h), []string{"leaving", "victim", "wild"}) {
		t.Fatalf("at start: %v, failed %v", names(h), failed(h))
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, "s", name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("aaa.toml", udpServer("127.0.0.1:37015", "")) // the victim's address, sorting first
	write("abc.toml", udpServer("127.0.0.1:37016", "")) // covered by wild's 0.0.0.0
	write("zzz.toml", udpServer("0.0.0.0:37015", ""))   // a wildcard over the victim
	write("victim.toml", udpServer("127.0.0.1:37015", "")+"[server]\nname = \"changed\"\n")
	os.Remove(filepath.Join(dir, "s", "leaving.toml"))
	write("new.toml", udpServer("127.0.0.1:37017", "")) // the leaving server's address: free now

	h = reloadHost(t, dir, running)
	if got := names(h); !slices.Equal(got, []string{"new", "victim", "wild"}) {
		t.Fatalf("after SIGHUP: %v, failed %v", got, failed(h))
	}
	f := failed(h)
	for file, want := range map[string]string{
		"aaa.toml": `overlaps udp 127.0.0.1:37015 of listen.udp[0] in ` + filepath.Join(dir, "s", "victim.toml") + ` (server "victim")`,
		"abc.toml": `overlaps udp 0.0.0.0:37016 of listen.udp[0] in ` + filepath.Join(dir, "s", "wild.toml") + ` (server "wild")`,
		"zzz.toml": `udp 0.0.0.0:37015 overlaps udp 127.0.0.1:37015`,
	} {
		if !strings.Contains(f[file], want) {
			t.Errorf("%s: %q, want %q", file, f[file], want)
		}
	}
	if len(f) != 3 {
		t.Errorf("refused: %v", f)
	}

	// At a start the same files load in glob order: aaa takes the address.
	h, err = config.LoadHost(filepath.Join(dir, "queryd.toml"), modules...)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names(h), "aaa") || slices.Contains(names(h), "victim") {
		t.Errorf("at a start, glob order: %v, failed %v", names(h), failed(h))
	}
}

// TestReloadHostNameBelongsToItsFile (issue 39, 2): a file with a running
// server's name in an earlier include folder is refused, naming both
// files; the running server keeps its file (it is not restarted from the
// other one).
func TestReloadHostNameBelongsToItsFile(t *testing.T) {
	main := "[admin]\nlisten = \"127.0.0.1:9273\"\n[servers]\ninclude = [\"a/*.toml\", \"b/*.toml\"]\n"
	dir := writeFiles(t, map[string]string{
		"queryd.toml":  main,
		"b/arena.toml": udpServer("127.0.0.1:37020", ""),
	})
	h, err := config.LoadHost(filepath.Join(dir, "queryd.toml"), modules...)
	if err != nil || !slices.Equal(names(h), []string{"arena"}) {
		t.Fatalf("at start: %v %v", names(h), err)
	}
	running := h.Servers
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o700); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "a", "arena.toml")
	if err := os.WriteFile(other, []byte(udpServer("127.0.0.1:37021", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	h = reloadHost(t, dir, running)
	if len(h.Servers) != 1 || h.Servers[0].Path != filepath.Join(dir, "b", "arena.toml") {
		t.Fatalf("after SIGHUP: %+v", h.Servers)
	}
	want := `the server name "arena" (the file name without .toml) is taken by ` + filepath.Join(dir, "b", "arena.toml")
	if f := failed(h); !strings.Contains(f["arena.toml"], want) || !strings.Contains(f["arena.toml"], other) {
		t.Errorf("refused: %v, want %q naming %s", f, want, other)
	}
}

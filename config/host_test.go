package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
)

// writeFiles writes files (relative path → text) under a new temp dir and
// returns the dir.
func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// names are the host's servers' names.
func names(h *config.Host) []string {
	var out []string
	for _, s := range h.Servers {
		out = append(out, s.Name)
	}
	return out
}

// failed maps the host's refused files (base names) to their errors.
func failed(h *config.Host) map[string]string {
	out := map[string]string{}
	for _, f := range h.Failed {
		out[filepath.Base(f.Path)] = f.Error()
	}
	return out
}

// TestLoadHostExample: examples/host is a host of three servers, alpha,
// bravo and charlie, each on its own port with its own NAME.sock; the main
// file has only host-wide tables, so it is no server, and its [admin] is
// every server's.
func TestLoadHostExample(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	h, err := config.LoadHost("../examples/host/queryd.toml", modules...)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(h); !slices.Equal(got, []string{"alpha", "bravo", "charlie"}) || len(h.Failed) != 0 {
		t.Fatalf("servers %v, failed %v", got, failed(h))
	}
	for i, s := range h.Servers {
		c := s.Config
		if got, want := c.Listen.UDP[0].Port(), uint16(27115+i); got != want {
			t.Errorf("%s: port %d, want %d", s.Name, got, want)
		}
		if got, want := c.FeedSocket(), "/run/user/1000/queryd/"+s.Name+".sock"; got != want {
			t.Errorf("%s: feed socket %s, want %s", s.Name, got, want)
		}
		if c.Admin.Listen != h.Main.Admin.Listen || !slices.Equal(c.Servers.Include, h.Main.Servers.Include) {
			t.Errorf("%s: the host-wide tables are not the main file's", s.Name)
		}
		if filepath.Base(s.Path) != s.Name+".toml" || h.Server(s.Name) != &h.Servers[i] {
			t.Errorf("%s: path %s", s.Name, s.Path)
		}
	}
	if h.Server("main") != nil || h.Server("delta") != nil {
		t.Error("Server found a server the host does not have")
	}
}

// TestLoadHostSingleFile: a config without [servers] is the one server
// "main", as every config before host mode, with today's default socket.
func TestLoadHostSingleFile(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	dir := writeFiles(t, map[string]string{"q.toml": "[listen]\nudp = [\"127.0.0.1:27015\"]\n"})
	h, err := config.LoadHost(filepath.Join(dir, "q.toml"), modules...)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(h); !slices.Equal(got, []string{"main"}) || h.Servers[0].Config != h.Main || h.Servers[0].Path != h.Path {
		t.Fatalf("servers %v", got)
	}
	if got := h.Main.FeedSocket(); got != "/run/user/1000/queryd/feed.sock" {
		t.Errorf("feed socket %s", got)
	}
	for _, text := range []string{"", "[admin]\nlisten = \"\"\n"} {
		h, err := config.ParseHost([]byte(text), dir, modules...)
		if err != nil || !slices.Equal(names(h), []string{"main"}) {
			t.Errorf("%q: %v %v", text, err, h)
		}
	}
}

// TestLoadHostMainErrors: the main file's errors (and an unreadable main
// file) fail LoadHost, with the file and the key.
func TestLoadHostMainErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{"q.toml": "[servers]\ninclude = [\"[\"]\n"})
	_, err := config.LoadHost(filepath.Join(dir, "q.toml"), modules...)
	if err == nil || !strings.Contains(err.Error(), "servers.include[0]") || !strings.Contains(err.Error(), "q.toml") {
		t.Errorf("bad glob: %v", err)
	}
	if _, err := config.LoadHost(filepath.Join(dir, "missing.toml"), modules...); err == nil {
		t.Error("a missing main file loaded")
	}
}

// TestCheckHost: CheckHost reports every file's errors (the main file's
// too, without stopping there) and warnings, each line prefixed with its
// file; a warning about a key in error is left out.
func TestCheckHost(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"queryd.toml": "[admin]\nlisten = \"0.0.0.0:9273\"\n[log]\nlevel = \"loud\"\n[servers]\ninclude = [\"s/*.toml\", \"[\"]\n",
		"s/a.toml":    "[listen]\nudp = [\"127.0.0.1:27115\"]\n",
		"s/b.toml":    "[listen]\nudp = [\"127.0.0.1:27115\"]\n",
		"s/c.toml":    "[listen]\nudp = [\"x\"]\n[admin]\nlisten = \"0.0.0.0:1\"\n",
	})
	path := filepath.Join(dir, "queryd.toml")
	h, warnings, err := config.CheckHost(path, modules...)
	if h == nil || err == nil {
		t.Fatalf("host %v, error %v", h, err)
	}
	var herrs config.HostErrors
	if !errors.As(err, &herrs) || len(herrs) != 3 {
		t.Fatalf("want HostErrors of the main file, b and c: %v", err)
	}
	s := func(name string) string { return filepath.Join(dir, "s", name) }
	for _, want := range []string{
		path + ": log.level: want debug, info, warn or error",
		path + ": servers.include[1]: want a glob",
		s("b.toml") + ": listen.udp[0]: udp 127.0.0.1:27115 overlaps udp 127.0.0.1:27115 of listen.udp[0] in " + s("a.toml"),
		s("c.toml") + ": admin: [admin] is host-wide: allowed only in the main file " + path,
		s("c.toml") + ": listen.udp[0]: want IP:PORT",
	} {
		if !strings.Contains(err.Error()+"\n", want) {
			t.Errorf("the errors lack %q:\n%v", want, err)
		}
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(line, dir) {
			t.Errorf("line %q does not start with its file", line)
		}
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], path+": admin.listen: 0.0.0.0:9273 is not a loopback address") {
		t.Errorf("warnings %q", warnings)
	}
	if got := names(h); !slices.Equal(got, []string{"a"}) || h.Main == nil {
		t.Errorf("servers %v", got)
	}
	if _, _, err := config.CheckHost(filepath.Join(dir, "none.toml"), modules...); err == nil {
		t.Error("a missing main file checked")
	}
}

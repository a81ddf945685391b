package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
)

// hostMain is a main file of host-wide tables only, including s/*.toml.
const hostMain = "[admin]\nlisten = \"127.0.0.1:9273\"\n[servers]\ninclude = [\"s/*.toml\"]\n"

// udpServer is a server file listening on addr, feeding at sock ("": the
// default NAME.sock).
func udpServer(addr, sock string) string {
	s := fmt.Sprintf("[listen]\nudp = [%q]\n", addr)
	if sock != "" {
		s += fmt.Sprintf("[feed]\nsocket = %q\n", sock)
	}
	return s
}

// loadHost writes files and loads queryd.toml among them.
func loadHost(t *testing.T, files map[string]string) *config.Host {
	t.Helper()
	dir := writeFiles(t, files)
	h, err := config.LoadHost(filepath.Join(dir, "queryd.toml"), modules...)
	if err != nil {
		t.Fatalf("LoadHost: %v", err)
	}
	return h
}

// TestHostIncludeMalformed: every bad [servers] value fails the main file
// with its key (a bad glob is an error, not a file matching nothing).
func TestHostIncludeMalformed(t *testing.T) {
	many := strings.Repeat(`"s/*.toml", `, config.MaxIncludes+1)
	for text, want := range map[string]string{
		`include = "s/*.toml"`:              "servers.include: want an array, got a string",
		`include = [1]`:                     "servers.include",
		`include = [""]`:                    `servers.include[0]: want a glob of server files such as "servers.d/*.toml", got ""`,
		`include = ["["]`:                   `servers.include[0]: want a glob of server files such as "servers.d/*.toml", got "[": syntax error in pattern`,
		`include = ["s/*.toml", "s/[a-"]`:   `servers.include[1]: `,
		`include = ["s\\"]`:                 `servers.include[0]: `,
		`include = ["[/*.toml"]`:            `servers.include[0]: `,
		`include = ["a\u0000b"]`:            `servers.include[0]: want a glob of server files, got "a\x00b" (a NUL byte)`,
		"include = [" + many + "]":          fmt.Sprintf("servers.include: at most %d patterns, got %d", config.MaxIncludes, config.MaxIncludes+1),
		`include = ["*/a.toml"]`:            `servers.include[0]: want wildcards only in the file name (one folder of server files, read once), such as "servers.d/*.toml", got "*/a.toml"`,
		`include = ["s/*/*.toml"]`:          `servers.include[0]: want wildcards only in the file name`,
		`include = ["/etc/q?/*.toml"]`:      `servers.include[0]: want wildcards only in the file name`,
		`include = ["s/*.toml", "[s]/a"]`:   `servers.include[1]: want wildcards only in the file name`,
		`includes = ["s/*.toml"]`:           "servers.includes: unknown key (did you mean include?)",
		"[servers.include]\nx = 1":          "servers.include: want an array, got a table",
		"include = []\n[servers.x]\n":       "servers.x: unknown key",
		"x = 1\n[[servers.include]]\n":      "servers.include: ",
		"include = [\"s/*.toml\"]\n[xdp]\n": "",
	} {
		dir := writeFiles(t, map[string]string{"queryd.toml": "[servers]\n" + text + "\n"})
		_, err := config.LoadHost(filepath.Join(dir, "queryd.toml"), modules...)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", text, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: got %v, want %q", text, err, want)
		case want != "" && !strings.Contains(err.Error(), "queryd.toml"):
			t.Errorf("%q: the error does not name the file: %v", text, err)
		}
	}
}

// TestHostNoneMatching: patterns matching nothing are fine: a host with
// no server (the main file is none), or only the main one.
func TestHostNoneMatching(t *testing.T) {
	h := loadHost(t, map[string]string{"queryd.toml": hostMain + "\n", "s/readme.txt": "x"})
	if len(h.Servers) != 0 || len(h.Failed) != 0 {
		t.Errorf("servers %v, failed %v", names(h), failed(h))
	}
	h = loadHost(t, map[string]string{"queryd.toml": "[listen]\nudp = [\"127.0.0.1:1\"]\n[servers]\ninclude = [\"none/*.toml\", \"/nonexistent/*.toml\"]\n"})
	if !slices.Equal(names(h), []string{"main"}) || len(h.Failed) != 0 {
		t.Errorf("servers %v, failed %v", names(h), failed(h))
	}
}

// TestHostMainIsServer: the main file is the server "main" when it has a
// per-server table or no [servers] table; with host-wide tables and
// [servers] only it is none.
func TestHostMainIsServer(t *testing.T) {
	for text, want := range map[string]bool{
		"":                                     true,
		"[admin]\n[log]\n[xdp]\n":              true,
		hostMain:                               false,
		"[servers]\n":                          false,
		"[servers]\n[log]\n[xdp]\n":            false,
		hostMain + "[host]\n":                  false,
		"[host]\n":                             true,
		hostMain + "[listen]\n":                true,
		hostMain + "[feed]\n":                  true,
		hostMain + "[limits]\n":                true,
		hostMain + "[server]\n":                true,
		hostMain + "[relay]\n":                 true,
		hostMain + "[upstream]\n":              true,
		hostMain + "[a2s]\n":                   true,
		hostMain + "[quake3]\n":                true,
		hostMain + "[sagl]\nenabled = false\n": true,
	} {
		h := loadHost(t, map[string]string{"queryd.toml": text, "s/a.toml": udpServer("127.0.0.1:27115", "")})
		got := h.Server("main") != nil
		if got != want {
			t.Errorf("%q: main is a server: %v, want %v", text, got, want)
		}
		if slices.Contains(names(h), "a") != strings.Contains(text, "include") || len(h.Failed) != 0 {
			t.Errorf("%q: servers %v, failed %v", text, names(h), failed(h))
		}
		if want && h.Servers[0].Name != "main" {
			t.Errorf("%q: main is not first: %v", text, names(h))
		}
	}
}

// TestHostServerFileHostWide: a host-wide table in a server file refuses
// that file, naming the file, the key and the main file; the others run.
func TestHostServerFileHostWide(t *testing.T) {
	for _, table := range []string{"admin", "log", "xdp", "servers", "host"} {
		h := loadHost(t, map[string]string{
			"queryd.toml": hostMain,
			"s/a.toml":    udpServer("127.0.0.1:27115", "") + "[" + table + "]\n",
			"s/b.toml":    udpServer("127.0.0.1:27116", ""),
		})
		msg := failed(h)["a.toml"]
		want := table + ": [" + table + "] is host-wide: allowed only in the main file " + h.Path
		if !slices.Equal(names(h), []string{"b"}) || !strings.Contains(msg, want) || !strings.HasPrefix(msg, filepath.Join(filepath.Dir(h.Path), "s", "a.toml")+": ") {
			t.Errorf("[%s]: servers %v, a.toml: %q", table, names(h), msg)
		}
	}
}

// TestHostServerNames: a server is named by its file name without .toml;
// other names, "main" and a name taken are refused (the file unread), a
// file matched twice is one server, and the main file matched by a glob
// is not a server file too.
func TestHostServerNames(t *testing.T) {
	long := strings.Repeat("x", config.MaxServerName+1)
	h := loadHost(t, map[string]string{
		"queryd.toml":             "[servers]\ninclude = [\"s/*\", \"s/*.toml\", \"s/.*\", \"t/*.toml\", \"*.toml\"]\n",
		"s/ok-1_A.toml":           udpServer("127.0.0.1:27115", ""),
		"s/main.toml":             udpServer("127.0.0.1:27116", ""),
		"s/a.b.toml":              udpServer("127.0.0.1:27117", ""),
		"s/with space.toml":       udpServer("127.0.0.1:27118", ""),
		"s/x.conf":                udpServer("127.0.0.1:27119", ""),
		"s/.toml":                 udpServer("127.0.0.1:27120", ""),
		"s/é.toml":                udpServer("127.0.0.1:27121", ""),
		"s/" + long + ".toml":     udpServer("127.0.0.1:27122", ""),
		"t/ok-1_A.toml":           udpServer("127.0.0.1:27123", ""),
		"s/" + long[1:] + ".toml": udpServer("127.0.0.1:27124", ""),
	})
	if got := names(h); !slices.Equal(got, []string{"ok-1_A", long[1:]}) {
		t.Errorf("servers %v", got)
	}
	f := failed(h)
	for file, want := range map[string]string{
		"main.toml":       `the server name "main" is the main file's`,
		"a.b.toml":        `the server name "a.b" (the file name without .toml) must be 1 to 64 letters, digits, '-' or '_'`,
		"with space.toml": `"with space"`,
		"x.conf":          `"x.conf"`,
		".toml":           `the server name ""`,
		"é.toml":          `"é"`,
		long + ".toml":    long,
		"ok-1_A.toml":     `the server name "ok-1_A" (the file name without .toml) is taken by ` + filepath.Join(filepath.Dir(h.Path), "s", "ok-1_A.toml"),
	} {
		if !strings.Contains(f[file], want) {
			t.Errorf("%s: %q, want %q", file, f[file], want)
		}
	}
	if len(h.Failed) != 8 {
		t.Errorf("%d failed, want 8: %v", len(h.Failed), f)
	}
	if h.Failed[len(h.Failed)-1].Name != "ok-1_A" || !strings.HasSuffix(h.Failed[len(h.Failed)-1].Path, filepath.Join("t", "ok-1_A.toml")) {
		t.Errorf("the duplicate's FileError: %+v", h.Failed[len(h.Failed)-1])
	}
}

// TestHostBrokenFiles: a file that cannot be read, parsed or validated,
// one over MaxFileSize or MaxDepth, a folder or a FIFO matched by the
// glob, goes to Failed with its name and errors (each line prefixed with
// the file); the others run.
func TestHostBrokenFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"queryd.toml": hostMain,
		"s/a.toml":    udpServer("127.0.0.1:27115", ""),
		"s/b.toml":    "[listen\n",
		"s/c.toml":    "[listen]\nudp = [\"x\"]\n[a2s]\nprotocol = 300\n",
		"s/d.toml":    "[server]\nx = " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n",
		"s/e.toml":    "# " + strings.Repeat("x", config.MaxFileSize) + "\n",
		"s/f.toml/x":  "",
		"s/z.toml":    udpServer("127.0.0.1:27116", ""),
	})
	fifo := mkfifo(filepath.Join(dir, "s", "g.toml"))
	if fifo != nil {
		t.Log("no FIFO:", fifo)
	}
	h, err := config.LoadHost(filepath.Join(dir, "queryd.toml"), modules...)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(h); !slices.Equal(got, []string{"a", "z"}) {
		t.Errorf("servers %v", got)
	}
	f := failed(h)
	for file, want := range map[string][]string{
		"b.toml": {"TOML syntax"},
		"c.toml": {"listen.udp[0]: want IP:PORT", "a2s.protocol"},
		"d.toml": {"nested deeper than 32 levels"},
		"e.toml": {"larger than 1048576 bytes"},
		"f.toml": {"not a regular file"},
	} {
		for _, w := range want {
			if !strings.Contains(f[file], w) {
				t.Errorf("%s: %q lacks %q", file, f[file], w)
			}
		}
		for _, line := range strings.Split(f[file], "\n") {
			if !strings.HasPrefix(line, filepath.Join(dir, "s", file)+": ") {
				t.Errorf("%s: line %q does not start with the file", file, line)
			}
		}
	}
	if fifo == nil && !strings.Contains(f["g.toml"], "not a regular file") {
		t.Errorf("the FIFO: %q", f["g.toml"])
	}
	for _, fe := range h.Failed {
		if fe.Name != strings.TrimSuffix(filepath.Base(fe.Path), ".toml") {
			t.Errorf("%s: name %q", fe.Path, fe.Name)
		}
	}
}

// TestHostMaxServers: past MaxServers servers (the main one counts) the
// files are refused unread, in one FileError (the first's, counting the
// others); total work is bounded by MaxServers files.
func TestHostMaxServers(t *testing.T) {
	for _, tc := range []struct {
		mainIsServer bool
		files        int
		want         string // the FileError of the files past the cap
	}{
		{false, config.MaxServers, ""},
		{false, config.MaxServers + 1, "s256.toml: past the 256 servers one queryd runs (config.MaxServers): not read"},
		{true, config.MaxServers + 1, "s255.toml: past the 256 servers one queryd runs (config.MaxServers): not read, nor the 1 file(s) after it"},
		{false, config.MaxServers + 100, "s256.toml: past the 256 servers one queryd runs (config.MaxServers): not read, nor the 99 file(s) after it"},
	} {
		files := map[string]string{"queryd.toml": hostMain}
		if tc.mainIsServer {
			files["queryd.toml"] += "[listen]\nudp = [\"127.0.0.1:1\"]\n"
		}
		for i := range tc.files {
			files[fmt.Sprintf("s/s%03d.toml", i)] = udpServer(fmt.Sprintf("127.0.0.1:%d", 20000+i), "")
		}
		h := loadHost(t, files)
		wantServers := tc.files
		if tc.mainIsServer {
			wantServers++
		}
		if len(h.Servers) != min(wantServers, config.MaxServers) {
			t.Errorf("%+v: %d servers", tc, len(h.Servers))
		}
		switch {
		case tc.want == "" && len(h.Failed) != 0:
			t.Errorf("%d files: failed %v", tc.files, failed(h))
		case tc.want != "" && (len(h.Failed) != 1 || !strings.HasSuffix(h.Failed[0].Error(), tc.want)):
			t.Errorf("%+v: failed %v", tc, failed(h))
		case tc.want != "" && h.Failed[0].Name != strings.TrimSuffix(strings.Split(tc.want, ".")[0], ".toml"):
			t.Errorf("%+v: name %q", tc, h.Failed[0].Name)
		}
	}
}

// TestHostGlobOrder: each pattern's matches are taken sorted, the patterns
// in order; names starting with '.' (an editor's lock file, Kubernetes'
// ..data in a ConfigMap volume) only for a pattern whose name does; a
// folder with glob characters in its name is taken as it is.
func TestHostGlobOrder(t *testing.T) {
	h := loadHost(t, map[string]string{
		"queryd.toml":     "[servers]\ninclude = [\"b/*.toml\", \"a/*\", \"c/.*.toml\"]\n",
		"b/y.toml":        udpServer("127.0.0.1:2", ""),
		"b/x.toml":        udpServer("127.0.0.1:1", ""),
		"b/.#x.toml":      udpServer("127.0.0.1:1", ""),
		"a/z.toml":        udpServer("127.0.0.1:3", ""),
		"a/..data/z.toml": udpServer("127.0.0.1:3", ""),
		"a/.z.toml.swp":   "",
		"c/.hidden.toml":  udpServer("127.0.0.1:4", ""),
	})
	if got := names(h); !slices.Equal(got, []string{"x", "y", "z"}) || len(h.Failed) != 1 || !strings.Contains(failed(h)[".hidden.toml"], `the server name ".hidden"`) {
		t.Errorf("order %v, failed %v", got, failed(h))
	}
	dir := filepath.Join(t.TempDir(), "[q*]")
	for name, text := range map[string]string{"queryd.toml": hostMain, "s/a.toml": udpServer("127.0.0.1:27115", "")} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600)
	}
	h, err := config.LoadHost(filepath.Join(dir, "queryd.toml"), modules...)
	if err != nil || !slices.Equal(names(h), []string{"a"}) {
		t.Errorf("folder %s: %v %v", dir, err, h)
	}
}

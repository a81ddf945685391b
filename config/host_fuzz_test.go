package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
)

// FuzzParseHost: a main file of any text (its include globs included)
// over a folder of server files never panics; what it accepts is a host of
// at most MaxServers servers with unique names, "main" only first, each
// with its config, and every refused file has its error.
func FuzzParseHost(f *testing.F) {
	dir := f.TempDir()
	for name, text := range map[string]string{
		"s/a.toml":       udpServer("127.0.0.1:27115", ""),
		"s/b.toml":       udpServer("0.0.0.0:27115", ""),
		"s/main.toml":    udpServer("127.0.0.1:27117", ""),
		"s/x y.toml":     udpServer("127.0.0.1:27118", ""),
		"s/c.toml":       "[admin]\n",
		"t/a.toml":       udpServer("[::]:27119", "/run/q/a.sock"),
		"t/d.toml":       "[listen\n",
		"t/e/f.toml":     "",
		"queryd.toml":    hostMain,
		"[weird]/g.toml": "",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			f.Fatal(err)
		}
	}
	f.Add([]byte(hostMain))
	f.Add([]byte("[servers]\ninclude = [\"*/*.toml\", \"*.toml\", \"t/*/*\"]\n[listen]\nudp = [\"127.0.0.1:27115\"]\n"))
	f.Add([]byte("[servers]\ninclude = [\"[\", \"s/[a-\", \"\\\\\"]\n"))
	f.Add([]byte("[servers]\ninclude = [\"s/?.toml\", \"\\\\[weird]/*\"]\n[sagl]\nhttp = \"127.0.0.1:9273\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if c, err := config.Parse(data, modules...); err == nil {
			for _, p := range c.Servers.Include {
				if filepath.IsAbs(p) || strings.Contains(p, "..") {
					t.Skip("a glob outside the fuzz folder (it would read this machine's /proc or /tmp)")
				}
			}
		}
		h, err := config.ParseHost(data, dir, modules...)
		if err != nil {
			return
		}
		if len(h.Servers) > config.MaxServers || h.Main == nil {
			t.Fatalf("%d servers", len(h.Servers))
		}
		seen := map[string]bool{}
		for i, s := range h.Servers {
			if seen[s.Name] || s.Config == nil || s.Name == config.MainServer && i != 0 {
				t.Fatalf("server %d: %q (seen %v)", i, s.Name, seen[s.Name])
			}
			seen[s.Name] = true
		}
		for _, fe := range h.Failed {
			if fe.Err == nil || fe.Path == "" || fe.Error() == "" {
				t.Fatalf("a refused file without its error: %+v", fe)
			}
		}
	})
}

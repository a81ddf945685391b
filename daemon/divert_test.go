package daemon_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
)

// noIface is an [xdp] interface no host has: the fast path cannot attach.
const noIface = "qd-none0"

// divertFile is a server file diverting game, fed at dir/NAME.sock.
func divertFile(t *testing.T, dir, name, game string) {
	t.Helper()
	body := "[listen]\ndivert = [\"" + game + "\"]\nworkers = 1\n[feed]\nsocket = \"" + filepath.Join(dir, name+".sock") + "\"\n"
	if err := os.WriteFile(filepath.Join(dir, "s", name+".toml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDivertHostNoFastPath: in host mode, a server file with [listen]
// divert does not start when the fast path cannot attach (the divert would
// do nothing and leave its game server answering every query): it is down
// with the reason, the other servers run; a divert file added on SIGHUP
// does not start either. A single-server config with divert is refused.
func TestDivertHostNoFastPath(t *testing.T) {
	dir := daemontest.Dir(t)
	if err := os.Mkdir(filepath.Join(dir, "s"), 0o700); err != nil {
		t.Fatal(err)
	}
	main := daemontest.WriteConfig(t, dir, "[xdp]\ninterfaces = [\""+noIface+"\"]\n[servers]\ninclude = [\"s/*.toml\"]\n")
	divertFile(t, dir, "div", "127.0.0.1:27991")
	d := daemontest.StartHost(t, nil, main)
	t.Cleanup(func() { d.Stop() })
	if got := d.ServerNames(); !slices.Equal(got, []string{"main"}) || d.Server("div") != nil {
		t.Fatalf("servers %v: want main only, div down", got)
	}
	divertFile(t, dir, "div2", "127.0.0.1:27992")
	d.Reload()
	if got := d.ServerNames(); !slices.Equal(got, []string{"main"}) {
		t.Errorf("after SIGHUP, servers %v: want main only (div2 has divert and no fast path)", got)
	}

	single := filepath.Join(dir, "single.toml")
	body := "[listen]\ndivert = [\"127.0.0.1:27993\"]\n[feed]\nsocket = \"" + filepath.Join(dir, "single.sock") + "\"\n[xdp]\ninterfaces = [\"" + noIface + "\"]\n"
	if err := os.WriteFile(single, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(single)
	if err != nil {
		t.Fatal(err)
	}
	dd, err := daemon.New(daemon.Options{Config: cfg, Path: single, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), "[listen] divert: the XDP fast path could not be attached") || !strings.Contains(err.Error(), "relay") {
		if dd != nil {
			t.Log("started")
		}
		t.Errorf("a single server with divert and no fast path: %v, want the start refused with the reason and relay mode", err)
	}
}

// Package daemontest runs a queryd daemon in the test's own process, on
// loopback, for the tests of the daemon and of the protocol modules: a
// config with the UDP and admin listeners on 127.0.0.1 port 0 and the feed
// socket in a fresh folder, the modules under test, and a clean stop when
// the test ends.
package daemontest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/responder"
)

// Daemon is a daemon running for a test.
type Daemon struct {
	*daemon.Daemon
	Dir        string // the test's folder (feed socket, config file)
	ConfigPath string
	Socket     string // the feed socket

	cancel context.CancelFunc
	reload chan struct{}
	done   chan error
}

// Base is the config every test daemon starts from; Start appends the
// test's own TOML to it.
func Base(dir string) string {
	return `
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
`
}

// Dir returns a fresh folder short enough for Unix socket paths, removed
// when t ends.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "qd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// WriteConfig writes Base with extra appended to dir/queryd.toml and
// returns its path.
func WriteConfig(t testing.TB, dir, extra string) string {
	t.Helper()
	path := filepath.Join(dir, "queryd.toml")
	if err := os.WriteFile(path, []byte(Base(dir)+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Start runs a daemon with mods on Base plus extra and stops it when t
// ends (failing t if it did not stop cleanly).
func Start(t testing.TB, mods []daemon.Module, extra string) *Daemon {
	t.Helper()
	dir := Dir(t)
	d := StartFile(t, mods, WriteConfig(t, dir, extra))
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("the daemon stopped with an error: %v", err)
		}
	})
	return d
}

// StartFile runs a daemon with mods on the config file at path; the test
// stops it (Stop).
func StartFile(t testing.TB, mods []daemon.Module, path string) *Daemon {
	t.Helper()
	cfg, err := config.Load(path, daemon.ConfigModules(mods)...)
	if err != nil {
		t.Fatal(err)
	}
	return StartConfig(t, mods, cfg, path)
}

// StartHost runs a daemon in host mode with mods on the main config file
// at path and the server files it includes (config.LoadHost; Reload reads
// them all again); the test stops it (Stop). Socket is the first server's
// feed socket ("" when the host runs none).
func StartHost(t testing.TB, mods []daemon.Module, path string) *Daemon {
	t.Helper()
	h, err := config.LoadHost(path, daemon.ConfigModules(mods)...)
	if err != nil {
		t.Fatal(err)
	}
	dd, err := daemon.New(daemon.Options{Host: h, Path: path, Modules: mods, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return run(dd, filepath.Dir(path), path)
}

// StartConfig runs a daemon with mods on cfg (path is its file, read again
// by Reload; "" for none); the test stops it (Stop).
func StartConfig(t testing.TB, mods []daemon.Module, cfg *config.Config, path string) *Daemon {
	t.Helper()
	return StartLogged(t, mods, cfg, path, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// StartLogged is StartConfig with the daemon logging to log.
func StartLogged(t testing.TB, mods []daemon.Module, cfg *config.Config, path string, log *slog.Logger) *Daemon {
	t.Helper()
	dd, err := daemon.New(daemon.Options{Config: cfg, Path: path, Modules: mods, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return run(dd, filepath.Dir(dd.FeedPath()), path)
}

// run runs dd until Stop.
func run(dd *daemon.Daemon, dir, path string) *Daemon {
	ctx, cancel := context.WithCancel(context.Background())
	d := &Daemon{
		Daemon: dd, Dir: dir, ConfigPath: path, Socket: dd.FeedPath(),
		cancel: cancel, reload: make(chan struct{}), done: make(chan error, 1),
	}
	go func() { d.done <- dd.Run(ctx, d.reload) }()
	return d
}

// UDP returns the first UDP address.
func (d *Daemon) UDP() netip.AddrPort { return d.UDPAddrs()[0] }

// Stop ends the daemon (once; later calls return nil) and returns Run's
// error: nil after a clean stop.
func (d *Daemon) Stop() error {
	if d.cancel == nil {
		return nil
	}
	d.cancel()
	d.cancel = nil
	select {
	case err := <-d.done:
		return err
	case <-time.After(10 * time.Second):
		panic("daemontest: the daemon did not stop within 10 s")
	}
}

// Done delivers Run's error when the daemon stops by itself (a part failed).
func (d *Daemon) Done() <-chan error { return d.done }

// Feed connects to the feed socket; the connection closes when t ends.
func (d *Daemon) Feed(t testing.TB) *feed.Client {
	t.Helper()
	c, err := feed.Dial(d.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Metric returns the value of the counter or gauge name: its first series
// with a label whose value is label ("": its first series), or 0 when there
// is none. It reads the registry directly, also after Stop.
func (d *Daemon) Metric(t testing.TB, name, label string) float64 {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := label == ""
			for _, l := range m.GetLabel() {
				match = match || l.GetValue() == label
			}
			if !match {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// Requests returns queryd_requests_total{protocol, outcome}.
func (d *Daemon) Requests(t testing.TB, protocol, outcome string) float64 {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != responder.MetricRequests {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["protocol"] == protocol && labels["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// PrintedJSON is v as `queryd query` prints it (indented, HTML unescaped).
func PrintedJSON(t testing.TB, v any) string {
	t.Helper()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

package sagl_test

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/sagl"
)

func parseSAGL(text string) (*sagl.Section, error) {
	c, err := config.Parse([]byte(text), sagl.Module{})
	if err != nil {
		return nil, err
	}
	return c.Section("sagl").(*sagl.Section), nil
}

func TestSectionDefaults(t *testing.T) {
	s, err := parseSAGL("[sagl]\n")
	if err != nil {
		t.Fatal(err)
	}
	want := sagl.Section{Enabled: true, Players: sagl.PlayersList, MaxLogo: 1 << 20, MaxList: 64 << 10,
		HTTPMaxConns: 256, HTTPIdleTimeout: config.Duration(60 * time.Second)}
	if *s != want || s.HTTP.IsValid() || !s.On() {
		t.Fatalf("[sagl] defaults: %+v, want %+v", *s, want)
	}
	if key, n := s.Descriptors(); key != "sagl.http_max_conns" || n != 0 {
		t.Errorf("HTTP off: descriptors %s %d", key, n)
	}
}

func TestSectionValid(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "logo.png")
	if err := os.WriteFile(png, append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 100)...), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := parseSAGL(`[sagl]
players = "count"
http = "127.0.0.1:8080"
logo = "` + png + `"
max_logo = "2MiB"
max_list = "128KiB"
logo_dir = "` + dir + `"
http_max_conns = 64
http_idle_timeout = "15s"
`)
	if err != nil {
		t.Fatal(err)
	}
	want := sagl.Section{Enabled: true, Players: sagl.PlayersCount, HTTP: netip.MustParseAddrPort("127.0.0.1:8080"), Logo: png,
		MaxLogo: 2 << 20, MaxList: 128 << 10, LogoDir: dir, HTTPMaxConns: 64, HTTPIdleTimeout: config.Duration(15 * time.Second)}
	if *s != want {
		t.Fatalf("%+v, want %+v", *s, want)
	}
	if key, n := s.Descriptors(); key != "sagl.http_max_conns" || n != 64 {
		t.Errorf("descriptors %s %d", key, n)
	}
	s.LimitDescriptors(10)
	if s.HTTPMaxConns != 10 {
		t.Errorf("LimitDescriptors(10): %d", s.HTTPMaxConns)
	}
	for text, want := range map[string]netip.AddrPort{
		`http = "[::1]:8080"`: netip.MustParseAddrPort("[::1]:8080"),
		`http = ""`:           {},
	} {
		if s, err := parseSAGL("[sagl]\n" + text + "\n"); err != nil || s.HTTP != want {
			t.Errorf("%s: %v %+v", text, err, s)
		}
	}
	for text, want := range map[string]sagl.PlayersMode{`players = "list"`: sagl.PlayersList, `players = "none"`: sagl.PlayersNone} {
		if s, err := parseSAGL("[sagl]\n" + text + "\n"); err != nil || s.Players != want {
			t.Errorf("%s: %v %+v", text, err, s)
		}
	}
}

func TestSectionErrors(t *testing.T) {
	dir := t.TempDir()
	gif := filepath.Join(dir, "logo.gif")
	big := filepath.Join(dir, "big.png")
	if err := os.WriteFile(gif, []byte("GIF89a and more"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 2000)...), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.png")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ toml, key, reason string }{
		{`players = "all"`, "sagl.players", `want "list", "count" or "none"`},
		{`players = ""`, "sagl.players", `want "list", "count" or "none"`},
		{`http = "localhost"`, "sagl.http", "want IP:PORT"},
		{`http = "localhost:8080"`, "sagl.http", "want IP:PORT"},
		{`http = 8080`, "sagl.http", "got an integer"},
		{`logo = "` + filepath.Join(dir, "missing.png") + `"`, "sagl.logo", "cannot read the logo"},
		{`logo = "` + gif + `"`, "sagl.logo", "not a PNG or JPEG"},
		{`logo = "` + dir + `"`, "sagl.logo", "not a regular file"},
		{"logo = \"" + big + "\"\nmax_logo = 1024", "sagl.logo", "too large"},
		{`logo = "` + fifo + `"`, "sagl.logo", "a named pipe (FIFO): not a regular file"},
		{`logo = "/dev/zero"`, "sagl.logo", "a device: not a regular file"},
		{`logo_dir = "` + filepath.Join(dir, "missing") + `"`, "sagl.logo_dir", "cannot use the logo directory"},
		{`logo_dir = "` + gif + `"`, "sagl.logo_dir", "not a directory"},
		{`logo_dir = "` + fifo + `"`, "sagl.logo_dir", "not a directory"},
		{`http_max_conns = 0`, "sagl.http_max_conns", "want 1 to 65536"},
		{`http_max_conns = 65537`, "sagl.http_max_conns", "want 1 to 65536"},
		{`http_idle_timeout = "0s"`, "sagl.http_idle_timeout", "want 1s to 1h"},
		{`http_idle_timeout = "soon"`, "sagl.http_idle_timeout", `want a duration such as "60s" or "2m", got "soon"`},
		{`max_logo = 10`, "sagl.max_logo", "want 1KiB to 16MiB"},
		{`max_logo = "17MiB"`, "sagl.max_logo", "want 1KiB to 16MiB"},
		{`max_list = "1GiB"`, "sagl.max_list", "want 1KiB to 4MiB"},
		{`max_list = "lots"`, "sagl.max_list", `want a size such as "256KiB"`},
		{`nope = 1`, "sagl.nope", "unknown key"},
	}
	for _, tt := range tests {
		err := parseWithin(t, 2*time.Second, "[sagl]\n"+tt.toml+"\n")
		var errs config.Errors
		if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Key != tt.key || !strings.Contains(errs[0].Reason, tt.reason) {
			t.Errorf("%s: %v; want %s: …%s…", tt.toml, err, tt.key, tt.reason)
		}
	}
}

// The HTTP keys take effect on restart.
func TestSectionRestartKeys(t *testing.T) {
	old, err := parseSAGL("[sagl]\nhttp = \"127.0.0.1:8080\"\n")
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		"http = \"127.0.0.1:8080\"\nplayers = \"none\"":         "",
		"http = \"127.0.0.1:8081\"":                             "sagl.http",
		"http = \"\"":                                           "sagl.http",
		"http = \"127.0.0.1:8080\"\nenabled = false":            "sagl.http",
		"http = \"127.0.0.1:8080\"\nhttp_max_conns = 8":         "sagl.http_max_conns",
		"http = \"127.0.0.1:8080\"\nhttp_idle_timeout = \"5s\"": "sagl.http_idle_timeout",
	} {
		s, err := parseSAGL("[sagl]\n" + text + "\n")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(s.RestartKeys(old), " "); got != want {
			t.Errorf("%q: restart keys %q, want %q", text, got, want)
		}
	}
}

// parseWithin parses doc and fails the test if that takes longer than limit
// (a logo path that is a FIFO used to block the open for good).
func parseWithin(t *testing.T, limit time.Duration, doc string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := parseSAGL(doc)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("parsing %q did not return within %v", doc, limit)
		return nil
	}
}

package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSAGLDefaults(t *testing.T) {
	c, err := Parse([]byte("[sagl]\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := c.SAGL
	if !s.Enabled || s.Players != "list" || s.MaxLogo != 1<<20 || s.MaxList != 64<<10 || s.HTTP != "" || s.Logo != "" ||
		s.LogoDir != "" || s.HTTPMaxConns != 256 || s.HTTPIdleTimeout != Duration(60*time.Second) {
		t.Fatalf("[sagl] defaults: %+v", s)
	}
}

func TestSAGLValid(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "logo.png")
	if err := os.WriteFile(png, append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 100)...), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte(`[sagl]
players = "count"
http = "127.0.0.1:8080"
logo = "` + png + `"
max_logo = "2MiB"
max_list = "128KiB"
logo_dir = "` + dir + `"
http_max_conns = 64
http_idle_timeout = "15s"
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.SAGL.Players != "count" || c.SAGL.MaxLogo != 2<<20 || c.SAGL.MaxList != 128<<10 || c.SAGL.Logo != png ||
		c.SAGL.LogoDir != dir || c.SAGL.HTTPMaxConns != 64 || c.SAGL.HTTPIdleTimeout != Duration(15*time.Second) {
		t.Fatalf("%+v", c.SAGL)
	}
}

func TestSAGLErrors(t *testing.T) {
	dir := t.TempDir()
	gif := filepath.Join(dir, "logo.gif")
	big := filepath.Join(dir, "big.png")
	os.WriteFile(gif, []byte("GIF89a and more"), 0o644)
	os.WriteFile(big, append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 2000)...), 0o644)
	fifo := filepath.Join(dir, "fifo.png")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ toml, key, reason string }{
		{`players = "all"`, "sagl.players", `want "list", "count" or "none"`},
		{`http = "localhost"`, "sagl.http", "want IP:PORT"},
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
		{`http_idle_timeout = "0s"`, "sagl.http_idle_timeout", "want 1s to 1h"},
		{`max_logo = 10`, "sagl.max_logo", "want 1KiB to 16MiB"},
		{`max_list = "1GiB"`, "sagl.max_list", "want 1KiB to 4MiB"},
	}
	for _, tt := range tests {
		err := parseWithin(t, 2*time.Second, "[sagl]\n"+tt.toml+"\n")
		var errs Errors
		if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Key != tt.key || !strings.Contains(errs[0].Reason, tt.reason) {
			t.Errorf("%s: %v; want %s: …%s…", tt.toml, err, tt.key, tt.reason)
		}
	}
}

// parseWithin parses doc and fails the test if that takes longer than limit
// (a logo path that is a FIFO used to block the open for good).
func parseWithin(t *testing.T, limit time.Duration, doc string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Parse([]byte(doc))
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

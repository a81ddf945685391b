package sagl

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// logoDir makes a directory of logo files beside one outside it:
// dir/logos/{ok.png, sub/ok.png, fifo.png, dir.png/, empty.png, text.png,
// big.png, in.png → ok.png, out.png → ../outside.png, abs.png → /etc/passwd}
// and dir/outside.png. It returns dir/logos and the PNG's bytes.
func logoDir(t *testing.T) (string, []byte) {
	t.Helper()
	png, err := os.ReadFile("testdata/logo.png")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logos := filepath.Join(dir, "logos")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(logos, "sub"), 0o755))
	must(os.Mkdir(filepath.Join(logos, "dir.png"), 0o755))
	must(os.WriteFile(filepath.Join(logos, "ok.png"), png, 0o644))
	must(os.WriteFile(filepath.Join(logos, "sub", "ok.png"), png, 0o644))
	must(os.WriteFile(filepath.Join(dir, "outside.png"), png, 0o644))
	must(os.WriteFile(filepath.Join(logos, "empty.png"), nil, 0o644))
	must(os.WriteFile(filepath.Join(logos, "text.png"), []byte("not an image"), 0o644))
	must(os.WriteFile(filepath.Join(logos, "big.png"), append(png, make([]byte, 4096)...), 0o644))
	must(syscall.Mkfifo(filepath.Join(logos, "fifo.png"), 0o644))
	must(os.Symlink("ok.png", filepath.Join(logos, "in.png")))
	must(os.Symlink("../outside.png", filepath.Join(logos, "out.png")))
	must(os.Symlink("/etc/passwd", filepath.Join(logos, "abs.png")))
	return logos, png
}

// within runs f and fails the test if it takes longer than 2 s (a blocking
// open of a FIFO never returns).
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(2 * time.Second):
		t.Fatalf("%s did not return within 2 s", what)
		var zero T
		return zero
	}
}

type logoResult struct {
	logo *Logo
	err  error
}

// TestReadLogoIn: feed-set paths are read only inside the directory, only
// when they name a regular PNG or JPEG file within the size limit, and never
// block.
func TestReadLogoIn(t *testing.T) {
	logos, png := logoDir(t)
	max := int64(len(png) + 100)
	tests := []struct {
		dir, name string
		want      string // "" : the logo; else a part of the error
		is        error
	}{
		{logos, "ok.png", "", nil},
		{logos, "sub/ok.png", "", nil},
		{logos, "sub/../ok.png", "", nil},
		{logos, "in.png", "", nil},
		{logos, "fifo.png", "a named pipe (FIFO): not a regular file", ErrLogoNotRegular},
		{logos, "dir.png", "a directory: not a regular file", ErrLogoNotRegular},
		{logos, "empty.png", "empty file", nil},
		{logos, "text.png", "not a PNG or JPEG", nil},
		{logos, "big.png", "too large", ErrLogoTooLarge},
		{logos, "missing.png", "no such file", os.ErrNotExist},
		{logos, "../outside.png", "escapes from parent", nil},
		{logos, "out.png", "escapes from parent", nil},
		{logos, "abs.png", "escapes from parent", nil},
		{logos, filepath.Join(filepath.Dir(logos), "outside.png"), "must be relative", ErrLogoAbsolute},
		{logos, "/etc/passwd", "must be relative", ErrLogoAbsolute},
		{"", "ok.png", "logo_dir is unset", ErrLogoNoDir},
		{filepath.Join(logos, "missing"), "ok.png", "logo directory", os.ErrNotExist},
		{filepath.Join(logos, "fifo.png"), "ok.png", "logo directory " + filepath.Join(logos, "fifo.png") + ": not a directory", nil},
		{filepath.Join(logos, "ok.png"), "ok.png", "not a directory", nil},
	}
	for _, tt := range tests {
		r := within(t, tt.dir+" "+tt.name, func() logoResult {
			root, err := OpenLogoDir(tt.dir)
			if err != nil {
				return logoResult{nil, err}
			}
			defer root.Close()
			l, err := ReadLogoIn(root, tt.name, max)
			return logoResult{l, err}
		})
		switch {
		case tt.want == "" && (r.err != nil || !bytes.Equal(r.logo.Data, png)):
			t.Errorf("ReadLogoIn(%s, %s): %v, want the logo", tt.dir, tt.name, r.err)
		case tt.want != "" && (r.err == nil || !strings.Contains(r.err.Error(), tt.want)):
			t.Errorf("ReadLogoIn(%s, %s): %v, want an error with %q", tt.dir, tt.name, r.err, tt.want)
		case tt.is != nil && !errors.Is(r.err, tt.is):
			t.Errorf("ReadLogoIn(%s, %s): %v, want errors.Is %v", tt.dir, tt.name, r.err, tt.is)
		}
	}
}

// TestReadLogoFile: the operator's path may be anywhere, but must be a
// regular file, and opening a FIFO or a device does not block.
func TestReadLogoFile(t *testing.T) {
	logos, png := logoDir(t)
	max := int64(len(png) + 100)
	tests := []struct{ path, want string }{
		{filepath.Join(logos, "ok.png"), ""},
		{filepath.Join(filepath.Dir(logos), "outside.png"), ""},
		{filepath.Join(logos, "out.png"), ""}, // a symlink anywhere: the operator's choice
		{filepath.Join(logos, "fifo.png"), "a named pipe (FIFO): not a regular file"},
		{logos, "a directory: not a regular file"},
		{"/dev/zero", "a device: not a regular file"},
		{filepath.Join(logos, "big.png"), "too large"},
		{filepath.Join(logos, "missing.png"), "cannot read the logo"},
	}
	for _, tt := range tests {
		r := within(t, tt.path, func() logoResult {
			l, err := ReadLogoFile(tt.path, max)
			return logoResult{l, err}
		})
		switch {
		case tt.want == "" && (r.err != nil || !bytes.Equal(r.logo.Data, png)):
			t.Errorf("ReadLogoFile(%s): %v, want the logo", tt.path, r.err)
		case tt.want != "" && (r.err == nil || !strings.Contains(r.err.Error(), tt.want)):
			t.Errorf("ReadLogoFile(%s): %v, want an error with %q", tt.path, r.err, tt.want)
		}
	}
}

//go:build unix

package feed

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPrivateDir: the default socket folder is made 0700, or accepted only
// when it is a directory of ours that no one else may write to.
func TestPrivateDir(t *testing.T) {
	root := shortDir(t)
	other := 65534
	for _, tc := range []struct {
		name  string
		setup func(dir string) // makes what is at dir before PrivateDir
		want  string           // "" for success, else part of the error
		root  bool             // needs root (chown to another uid)
	}{
		{"missing: made", func(string) {}, "", false},
		{"ours 0700", func(d string) { os.Mkdir(d, 0o700) }, "", false},
		{"ours 0755", func(d string) { os.Mkdir(d, 0o755); os.Chmod(d, 0o755) }, "", false},
		{"ours 0777", func(d string) { os.Mkdir(d, 0o777); os.Chmod(d, 0o777) }, "mode 0777: others may write", false},
		{"ours group-writable", func(d string) { os.Mkdir(d, 0o770); os.Chmod(d, 0o770) }, "mode 0770", false},
		{"symlink to ours", func(d string) {
			real := d + ".real"
			os.Mkdir(real, 0o700)
			os.Symlink(real, d)
		}, "is a symbolic link, not a directory", false},
		{"regular file", func(d string) { os.WriteFile(d, nil, 0o600) }, "is a regular file", false},
		{"another user's, 0777", func(d string) { os.Mkdir(d, 0o777); os.Chmod(d, 0o777); os.Chown(d, other, other) }, "owned by uid 65534", true},
		{"another user's, 0700", func(d string) { os.Mkdir(d, 0o700); os.Chown(d, other, other) }, "owned by uid 65534", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Getuid() != 0 {
				t.Skip("needs root to make a folder owned by another uid")
			}
			dir := filepath.Join(root, strings.ReplaceAll(tc.name, " ", "_"))
			tc.setup(dir)
			err := PrivateDir(dir)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				fi, err := os.Lstat(dir)
				if err != nil || !fi.IsDir() {
					t.Fatalf("after PrivateDir: %v, %v", fi, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("got %v; want an error naming %s and %q", err, dir, tc.want)
			}
		})
	}
	made := filepath.Join(root, "missing:_made")
	if fi, _ := os.Stat(made); fi.Mode().Perm() != 0o700&^umask() {
		t.Errorf("made with mode %v, want 0700", fi.Mode().Perm())
	}

	// The parent: missing, or writable by others without the sticky bit.
	if err := PrivateDir(filepath.Join(root, "nope", "queryd")); err == nil || !strings.Contains(err.Error(), "parent") {
		t.Errorf("missing parent: %v", err)
	}
	open := filepath.Join(root, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if err := PrivateDir(filepath.Join(open, "queryd")); err == nil || !strings.Contains(err.Error(), "not sticky") {
		t.Errorf("parent 0777 without sticky bit: %v", err)
	}
	os.Chmod(open, 0o777|fs.ModeSticky)
	if err := PrivateDir(filepath.Join(open, "queryd")); err != nil {
		t.Errorf("parent 1777 (like /tmp): %v", err)
	}
}

func umask() fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}

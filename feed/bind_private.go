package feed

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// bindInPrivateDir creates and listens on the socket file with at most perm
// without relying on Linux's fchmod-before-bind: it binds inside a new
// folder next to path that only the owner can enter, sets perm, and renames
// the socket into place. Nobody else can reach the socket before the rename.
func bindInPrivateDir(path string, perm fs.FileMode) (*net.UnixListener, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".qd")
	if err != nil {
		return nil, fmt.Errorf("private folder for binding: %w", err)
	}
	defer os.RemoveAll(tmp) // made 0700
	inner := filepath.Join(tmp, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: inner, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false) // Server.Close removes the path
	if err := os.Chmod(inner, perm); err != nil {
		ln.Close()
		return nil, err
	}
	if err := os.Rename(inner, path); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

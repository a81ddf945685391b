//go:build !linux

package feed

import (
	"io/fs"
	"net"
)

// bindPrivate creates and listens on the socket file with at most perm (see
// bindInPrivateDir).
func bindPrivate(path string, perm fs.FileMode) (*net.UnixListener, error) {
	return bindInPrivateDir(path, perm)
}

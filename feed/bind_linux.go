package feed

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"syscall"
)

// bindPrivate creates and listens on the socket file with at most perm
// (owner bits only). Linux gives a new socket file the socket's own mode,
// less the umask; fchmod on the socket before bind sets that mode, so the
// file never exists with looser permissions, whatever the umask. Changing
// the umask instead would change it for the whole process.
func bindPrivate(path string, perm fs.FileMode) (*net.UnixListener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) { err = syscall.Fchmod(int(fd), uint32(perm)) }); cerr != nil {
			return cerr
		}
		if err != nil {
			return fmt.Errorf("fchmod before bind: %w", err)
		}
		return nil
	}}
	ln, err := lc.Listen(context.Background(), "unix", path)
	if err != nil {
		return nil, err
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false) // Server.Close removes the path
	return ul, nil
}

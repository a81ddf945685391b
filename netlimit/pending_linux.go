package netlimit

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// pending reports whether the peer's bytes wait in c's receive queue,
// unread by the server: a request sent whole (perhaps with the token)
// whose connection the server has not read yet, on a busy machine.
func pending(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	if err := rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil {
		return false
	}
	return n > 0
}

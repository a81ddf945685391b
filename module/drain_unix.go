//go:build unix

package module

import (
	"net"
	"syscall"
)

// Drain discards every datagram c has received so far, without waiting,
// and returns how many: a poll calls it before each request, so that
// nothing that came before the request was sent is read as its answer.
func Drain(c *net.UDPConn) int {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	var buf [1]byte
	rc.Read(func(fd uintptr) bool {
		for n < maxDrain {
			_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_DONTWAIT)
			if err != nil && err != syscall.EINTR {
				break // EAGAIN: empty (or the socket's error, left to the next read)
			}
			n++
		}
		return true
	})
	return n
}

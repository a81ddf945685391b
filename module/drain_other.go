//go:build !unix

package module

import (
	"errors"
	"net"
	"os"
	"time"
)

// Drain discards every datagram c has received so far and returns how
// many: a poll calls it before each request, so that nothing that came
// before the request was sent is read as its answer. Here (no MSG_DONTWAIT)
// it waits a millisecond for each read.
func Drain(c *net.UDPConn) int {
	defer c.SetReadDeadline(time.Time{})
	var buf [1]byte
	n := 0
	for n < maxDrain {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.Read(buf[:]); errors.Is(err, os.ErrDeadlineExceeded) {
			break
		} else if err != nil && !isTruncated(err) {
			break
		}
		n++
	}
	return n
}

// isTruncated: Windows reports a datagram larger than the buffer as an error.
func isTruncated(err error) bool { return err != nil && !errors.Is(err, net.ErrClosed) }

//go:build !unix

package relay

import "net"

// sockIO reads and writes a session's socket through the net package: on
// systems without syscall.RawConn file descriptors a write may wait for
// buffer space and a parked read holds its pooled buffer.
type sockIO struct{ c *net.UDPConn }

func (x *sockIO) init(c *net.UDPConn) error {
	x.c = c
	return nil
}

func (x *sockIO) write(b []byte) error {
	_, err := x.c.Write(b)
	return err
}

func (x *sockIO) read() (*datagramBuf, int, error) {
	b := getBuf()
	n, err := x.c.Read(b[:])
	if err != nil {
		putBuf(b)
		return nil, 0, err
	}
	return b, n, nil
}

func wouldBlock(error) bool { return false }

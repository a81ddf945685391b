//go:build !unix

package relay

import "net"

// relayIO reads and writes a session's socket through the net package: on
// systems without syscall.RawConn file descriptors a write may wait for
// buffer space and a parked read holds its pooled buffer.
type relayIO struct{ c *net.UDPConn }

func (x *relayIO) init(c *net.UDPConn) error {
	x.c = c
	return nil
}

func (x *relayIO) write(b []byte) error {
	_, err := x.c.Write(b)
	return err
}

func (x *relayIO) read() (*relayBuf, int, error) {
	b := getRelayBuf()
	n, err := x.c.Read(b[:])
	if err != nil {
		putRelayBuf(b)
		return nil, 0, err
	}
	return b, n, nil
}

func wouldBlock(error) bool { return false }

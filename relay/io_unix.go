//go:build unix

package relay

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// sockIO reads and writes a session's socket through its syscall.RawConn:
// a write never waits for buffer space (EAGAIN comes back as an error), and
// a read parks without a buffer, taking one from the pool only when a
// datagram is there. The callbacks are bound once per session, so neither
// allocates.
type sockIO struct {
	rc   syscall.RawConn
	wbuf []byte // write's argument, for writeFd (the caller holds s.wmu)
	werr error
	wfn  func(uintptr) bool
	rbuf *datagramBuf // what readFd read (only the downstream goroutine reads)
	rn   int
	rerr error
	rfn  func(uintptr) bool
}

func (x *sockIO) init(c *net.UDPConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return fmt.Errorf("relay socket: %w", err)
	}
	x.rc, x.wfn, x.rfn = rc, x.writeFd, x.readFd
	return nil
}

// write sends b as one datagram, or fails at once (EAGAIN when the socket's
// send buffer is full).
func (x *sockIO) write(b []byte) error {
	x.wbuf = b
	err := x.rc.Write(x.wfn)
	x.wbuf = nil
	if err == nil {
		err, x.werr = x.werr, nil
	}
	return err
}

func (x *sockIO) writeFd(fd uintptr) bool {
	for {
		_, err := syscall.Write(int(fd), x.wbuf)
		if err == syscall.EINTR {
			continue
		}
		x.werr = err
		return true // never wait for the socket to become writable
	}
}

// read waits for a datagram and returns it in a pooled buffer (the caller
// puts it back with putBuf), or the socket's error.
func (x *sockIO) read() (*datagramBuf, int, error) {
	err := x.rc.Read(x.rfn)
	b, n := x.rbuf, x.rn
	x.rbuf = nil
	if err == nil {
		err, x.rerr = x.rerr, nil
	}
	if err != nil {
		if b != nil {
			putBuf(b)
		}
		return nil, 0, err
	}
	return b, n, nil
}

func (x *sockIO) readFd(fd uintptr) bool {
	b := getBuf()
	for {
		n, err := syscall.Read(int(fd), b[:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			putBuf(b)
			return false // park until the socket is readable
		case err != nil:
			putBuf(b)
			x.rerr = err
			return true
		}
		x.rbuf, x.rn = b, n
		return true
	}
}

// wouldBlock reports whether err says a socket's buffer is full.
func wouldBlock(err error) bool { return errors.Is(err, syscall.EAGAIN) }

//go:build linux

package main

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxDatagram is the receive buffer per datagram (replies are at most 1,400
// bytes except Quake 3's statusResponse and GameSpy4's full stat; larger
// ones are counted truncated, still as one datagram).
const maxDatagram = 4096

// pollTimeout bounds one wait for replies, so that a worker notices the end
// of its run and requests to give up on.
const pollTimeout = 10 * time.Millisecond

// batchIO is one connected UDP socket with its recvmmsg/sendmmsg headers and
// buffers, all allocated once. In "block" mode the socket is blocking, with
// SO_RCVTIMEO, and the goroutine sits in recvmmsg outside the Go netpoller;
// in "poll" mode it is non-blocking and waits in the netpoller.
type batchIO struct {
	fd   int
	file *os.File        // poll mode: the netpoller's handle on fd
	rc   syscall.RawConn // poll mode
	rbuf []byte
	riov []unix.Iovec
	rmsg []unix.Mmsghdr
	siov []unix.Iovec
	smsg []unix.Mmsghdr
	dl   int64 // poll mode: the read deadline set (ns since the clock's start)
}

// openSource opens a UDP socket bound to src:0 and connected to dst.
func openSource(src netip.Addr, dst netip.AddrPort, mode string, batch int) (*batchIO, error) {
	family := unix.AF_INET
	if dst.Addr().Is6() {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	b := &batchIO{fd: fd}
	if err := b.setup(src, dst, mode); err != nil {
		unix.Close(fd)
		return nil, err
	}
	b.alloc(batch)
	if mode == "poll" {
		b.file = os.NewFile(uintptr(fd), "udp "+src.String())
		if b.rc, err = b.file.SyscallConn(); err != nil {
			b.file.Close()
			return nil, fmt.Errorf("netpoller: %w", err)
		}
	}
	return b, nil
}

func (b *batchIO) setup(src netip.Addr, dst netip.AddrPort, mode string) error {
	if err := unix.SetsockoptInt(b.fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 1<<20); err != nil {
		return fmt.Errorf("SO_RCVBUF: %w", err)
	}
	if err := unix.Bind(b.fd, sockaddr(netip.AddrPortFrom(src, 0))); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	if err := unix.Connect(b.fd, sockaddr(dst)); err != nil {
		return fmt.Errorf("connect %s: %w", dst, err)
	}
	if mode == "poll" {
		return unix.SetNonblock(b.fd, true)
	}
	tv := unix.NsecToTimeval(int64(pollTimeout))
	if err := unix.SetsockoptTimeval(b.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("SO_RCVTIMEO: %w", err)
	}
	return nil
}

func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Addr: ap.Addr().As4(), Port: int(ap.Port())}
	}
	return &unix.SockaddrInet6{Addr: ap.Addr().As16(), Port: int(ap.Port())}
}

func (b *batchIO) alloc(batch int) {
	b.rbuf = make([]byte, batch*maxDatagram)
	b.riov = make([]unix.Iovec, batch)
	b.rmsg = make([]unix.Mmsghdr, batch)
	b.siov = make([]unix.Iovec, batch)
	b.smsg = make([]unix.Mmsghdr, batch)
	for i := range b.rmsg {
		b.riov[i].Base = &b.rbuf[i*maxDatagram]
		b.riov[i].SetLen(maxDatagram)
		b.rmsg[i].Hdr.Iov = &b.riov[i]
		b.rmsg[i].Hdr.SetIovlen(1)
		b.smsg[i].Hdr.Iov = &b.siov[i]
		b.smsg[i].Hdr.SetIovlen(1)
	}
}

func (b *batchIO) close() {
	if b.file != nil {
		b.file.Close()
		return
	}
	unix.Close(b.fd)
}

// datagram returns received datagram i of the last recv.
func (b *batchIO) datagram(i int) []byte {
	n := min(int(b.rmsg[i].Len), maxDatagram)
	return b.rbuf[i*maxDatagram : i*maxDatagram+n]
}

func mmsg(trap uintptr, fd int, msgs []unix.Mmsghdr, n, flags int) (int, error) {
	r, _, e := unix.Syscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), uintptr(n), uintptr(flags), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// send sends the k messages prepared in smsg and returns how many left.
func (b *batchIO) send(k int) (int, error) {
	for {
		m, err := mmsg(unix.SYS_SENDMMSG, b.fd, b.smsg, k, unix.MSG_DONTWAIT)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN || err == unix.ENOBUFS || err == unix.ECONNREFUSED {
			return 0, nil // try again with the next batch
		}
		return m, err
	}
}

// recv waits up to about pollTimeout for replies and returns how many
// arrived. now is the worker's clock, start its origin.
func (b *batchIO) recv(start time.Time, now int64) (int, error) {
	if b.rc == nil {
		for {
			n, err := mmsg(unix.SYS_RECVMMSG, b.fd, b.rmsg, len(b.rmsg), unix.MSG_WAITFORONE)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN || err == unix.ECONNREFUSED:
				return 0, nil
			}
			return n, err
		}
	}
	if now > b.dl-int64(pollTimeout)/2 { // move the deadline on only now and then: timers cost
		b.dl = now + int64(pollTimeout)
		if err := b.file.SetReadDeadline(start.Add(time.Duration(b.dl))); err != nil {
			return 0, err
		}
	}
	var n int
	var rerr error
	err := b.rc.Read(func(fd uintptr) bool {
		n, rerr = mmsg(unix.SYS_RECVMMSG, int(fd), b.rmsg, len(b.rmsg), unix.MSG_DONTWAIT)
		return rerr != unix.EAGAIN
	})
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), rerr == unix.ECONNREFUSED:
		return 0, nil
	case err != nil:
		return 0, err
	}
	return n, rerr
}

// run drives one source socket until the window (plus a drain) ends or its
// quota is spent. Its clock counts ns since start.
func (w *worker) run(start time.Time) error {
	b := w.io
	clock := func() int64 { return int64(time.Since(start)) }
	drained := true // the last recv left nothing queued
	for {
		now := clock()
		if drained { // a reply still queued is not lost, however late (say the generator was descheduled)
			w.expire(now)
		}
		if w.done(now) {
			return nil
		}
		if w.sending(now) {
			if err := w.sendBatch(now); err != nil {
				return err
			}
		}
		n, err := b.recv(start, now)
		if err != nil {
			return fmt.Errorf("recvmmsg: %w", err)
		}
		drained = n < len(b.rmsg)
		now = clock()
		for i := 0; i < n; i++ {
			w.onReply(b.datagram(i), now)
		}
	}
}

func (w *worker) sendBatch(now int64) error {
	k := w.nextBatch(now)
	if k == 0 {
		return nil
	}
	b := w.io
	for i := 0; i < k; i++ {
		p := w.req
		if w.kinds[i] {
			p = w.ask
		}
		b.siov[i].Base = &p[0]
		b.siov[i].SetLen(len(p))
	}
	m, err := b.send(k)
	w.sent(now, k, m)
	if err != nil {
		return fmt.Errorf("sendmmsg: %w", err)
	}
	return nil
}

// selfCPU returns the user plus system CPU time this process has used.
func selfCPU() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

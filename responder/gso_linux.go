//go:build linux

package responder

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// UDP generic segmentation offload (UDP_SEGMENT, Linux 4.18): an answer of
// several datagrams to one client leaves in one send of their concatenation,
// which the kernel (or the network card) cuts into datagrams of segSize
// bytes. It saves the send path's per-datagram work (route lookup, headers,
// queueing) for split A2S replies and SAGL parts.
const (
	maxGSOSegs  = 64     // datagrams per GSO send (the kernel's oldest limit)
	maxGSOBytes = 65_000 // payload per GSO send: within one IPv4 or IPv6 packet's 65,535
)

// gsoSupported reports whether the kernel knows UDP_SEGMENT on fd.
func gsoSupported(fd int) bool {
	_, err := unix.GetsockoptInt(fd, unix.IPPROTO_UDP, unix.UDP_SEGMENT)
	return err == nil
}

// gsoRun returns how many of out's first datagrams (an answer's, in order)
// can leave as one GSO send, and their segment size: at least two, at most
// maxGSOSegs datagrams and maxGSOBytes bytes, every one but the last of the
// first one's size and the last no larger. n is 0 when not even two can.
func gsoRun(out [][]byte) (n, seg int) {
	if len(out) < 2 {
		return 0, 0
	}
	seg = len(out[0])
	total := 0
	for n < len(out) && n < maxGSOSegs {
		d := out[n]
		if len(d) == 0 || len(d) > seg || total+len(d) > maxGSOBytes {
			break
		}
		total += len(d)
		n++
		if len(d) < seg {
			break // a shorter datagram ends the run
		}
	}
	if n < 2 {
		return 0, 0
	}
	return n, seg
}

// appendSegment appends the UDP_SEGMENT control message for seg-byte segments.
func appendSegment(b []byte, seg int) []byte {
	b = appendCmsg(b, unix.IPPROTO_UDP, unix.UDP_SEGMENT, 2)
	binary.NativeEndian.PutUint16(b[len(b)-unix.CmsgSpace(2)+unix.CmsgLen(0):], uint16(seg))
	return b
}

// gsoRefused reports whether a send error means the kernel or the route
// cannot segment (no checksum offload, an MTU below the segment, IPsec):
// the answer is then sent datagram by datagram and GSO turned off.
func gsoRefused(e unix.Errno) bool {
	return e == unix.EIO || e == unix.EINVAL || e == unix.EMSGSIZE || e == unix.ENOPROTOOPT || e == unix.EOPNOTSUPP
}

// sendEach sends a GSO message's datagrams one by one, with its control
// data minus the trailing UDP_SEGMENT message; it returns how many failed.
func sendEach(fd int, m *unix.Msghdr) int {
	iovs := unsafe.Slice(m.Iov, int(m.Iovlen))
	h := *m
	h.SetIovlen(1)
	if cl := int(m.Controllen) - unix.CmsgSpace(2); cl > 0 {
		h.SetControllen(cl)
	} else {
		h.Control = nil
		h.SetControllen(0)
	}
	failed := 0
	for i := range iovs {
		h.Iov = &iovs[i]
		for {
			_, _, e := unix.Syscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&h)), 0)
			if e == unix.EINTR {
				continue
			}
			if e != 0 {
				failed++
			}
			break
		}
	}
	return failed
}

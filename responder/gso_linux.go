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

// gsoSegment returns the segment size with which out (an answer's
// datagrams, in order) can leave as one GSO send, or 0: it needs at least
// two datagrams, every one but the last of the same size and the last no
// larger, within the count and size limits.
func gsoSegment(out [][]byte) int {
	if len(out) < 2 || len(out) > maxGSOSegs {
		return 0
	}
	seg, total := len(out[0]), 0
	for j, d := range out {
		if len(d) == 0 || len(d) > seg || (j < len(out)-1 && len(d) != seg) {
			return 0
		}
		total += len(d)
	}
	if total > maxGSOBytes || seg > 0xFFFF {
		return 0
	}
	return seg
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

//go:build linux

package responder

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

const msgTrunc = unix.MSG_TRUNC

const defaultSocket = SocketBatch

// listenUDP opens a net.UDPConn on ap ("udp4" for an IPv4 address, "udp6",
// IPv6 only, for an IPv6 one) with packet info enabled, so that replies can
// leave from the address each query arrived on.
func listenUDP(ap netip.AddrPort, rcvbuf int) (*net.UDPConn, error) {
	network := "udp4"
	if ap.Addr().Is6() && !ap.Addr().Is4In6() {
		network = "udp6"
	}
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			if network == "udp4" {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
			} else {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1)
			}
			if serr == nil && rcvbuf > 0 {
				serr = setRecvBuffer(int(fd), rcvbuf)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	pc, err := lc.ListenPacket(context.Background(), network, ap.String())
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}

// setRecvBuffer sets SO_RCVBUF, past net.core.rmem_max when allowed
// (SO_RCVBUFFORCE needs CAP_NET_ADMIN).
func setRecvBuffer(fd, size int) error {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, size) == nil {
		return nil
	}
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, size)
}

// replyControl appends to b the control message that makes a reply leave
// from the destination address recorded in the received control data oob.
// Without packet info it appends nothing (the kernel picks the source).
func replyControl(b, oob []byte) []byte {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(oob) {
			return b
		}
		data := oob[unix.SizeofCmsghdr:l]
		switch {
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			in := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
			b = appendCmsg(b, unix.IPPROTO_IP, unix.IP_PKTINFO, unix.SizeofInet4Pktinfo)
			out := (*unix.Inet4Pktinfo)(unsafe.Pointer(&b[len(b)-unix.CmsgSpace(unix.SizeofInet4Pktinfo)+unix.CmsgLen(0)]))
			out.Spec_dst = in.Addr
			return b
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			in := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
			b = appendCmsg(b, unix.IPPROTO_IPV6, unix.IPV6_PKTINFO, unix.SizeofInet6Pktinfo)
			out := (*unix.Inet6Pktinfo)(unsafe.Pointer(&b[len(b)-unix.CmsgSpace(unix.SizeofInet6Pktinfo)+unix.CmsgLen(0)]))
			out.Addr = in.Addr
			out.Ifindex = in.Ifindex
			return b
		}
		oob = oob[min(unix.CmsgSpace(l-unix.SizeofCmsghdr), len(oob)):]
	}
	return b
}

// appendCmsg appends a zeroed control message of dataLen bytes with its header set.
func appendCmsg(b []byte, level, typ int32, dataLen int) []byte {
	start := len(b)
	space := unix.CmsgSpace(dataLen)
	b = slices.Grow(b, space)[:start+space] // no allocation within b's capacity
	clear(b[start:])
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[start]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(dataLen))
	return b
}

// localAddr returns the destination address recorded in received control
// data (IP_PKTINFO / IPV6_PKTINFO), or the zero Addr.
func localAddr(oob []byte) netip.Addr {
	var b [64]byte
	c := replyControl(b[:0], oob)
	if len(c) == 0 {
		return netip.Addr{}
	}
	h := (*unix.Cmsghdr)(unsafe.Pointer(&c[0]))
	data := c[unix.CmsgLen(0):]
	if h.Type == unix.IP_PKTINFO && h.Level == unix.IPPROTO_IP {
		return netip.AddrFrom4((*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0])).Spec_dst)
	}
	return netip.AddrFrom16((*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0])).Addr)
}

// controlFrom appends the control message that sends from local.
func controlFrom(b []byte, local netip.Addr) []byte {
	if local.Is4() {
		b = appendCmsg(b, unix.IPPROTO_IP, unix.IP_PKTINFO, unix.SizeofInet4Pktinfo)
		out := (*unix.Inet4Pktinfo)(unsafe.Pointer(&b[len(b)-unix.CmsgSpace(unix.SizeofInet4Pktinfo)+unix.CmsgLen(0)]))
		out.Spec_dst = local.As4()
		return b
	}
	b = appendCmsg(b, unix.IPPROTO_IPV6, unix.IPV6_PKTINFO, unix.SizeofInet6Pktinfo)
	out := (*unix.Inet6Pktinfo)(unsafe.Pointer(&b[len(b)-unix.CmsgSpace(unix.SizeofInet6Pktinfo)+unix.CmsgLen(0)]))
	out.Addr = local.As16()
	return b
}

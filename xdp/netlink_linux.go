//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// netWatch keeps the program's view of its interfaces current: their MAC,
// whether they have VLAN devices on them, and their addresses, from
// netlink (the kernel's own tables). Its sockets are opened in New, in the
// caller's network namespace: one subscribed to link and address changes,
// one for dumps.
type netWatch struct {
	sub, dump int
	seq       uint32
	changed   chan struct{} // a link or an address changed (or a notice was lost)
	stop      atomic.Bool
	done      chan struct{}
}

// ifaceInfo is what the program needs of one interface.
type ifaceInfo struct {
	mac        [6]byte
	vlanUppers bool
}

// netState is the interfaces' state as netlink gave it.
type netState struct {
	ifaces map[uint32]ifaceInfo
	addrs  map[querydAddrkey]querydAddrKind // the watched interfaces' addresses and broadcasts (IPv4 as ::ffff:a.b.c.d)
	routes map[querydDenykey]uint32         // the main table: prefix → output interface (0: none)
	full   bool                             // more routes than the trie holds: routes is not used
}

// route is one route of the main table being read.
type route struct {
	oif, prio uint32
}

func openNetWatch() (*netWatch, error) {
	sub, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	groups := uint32(unix.RTMGRP_LINK | unix.RTMGRP_IPV4_IFADDR | unix.RTMGRP_IPV6_IFADDR | unix.RTMGRP_IPV4_ROUTE | unix.RTMGRP_IPV6_ROUTE)
	if err := unix.Bind(sub, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
		unix.Close(sub)
		return nil, fmt.Errorf("netlink subscribe: %w", err)
	}
	tv := unix.NsecToTimeval(int64(200 * time.Millisecond))
	unix.SetsockoptTimeval(sub, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	dump, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		unix.Close(sub)
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	unix.SetsockoptTimeval(dump, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	w := &netWatch{sub: sub, dump: dump, changed: make(chan struct{}, 1), done: make(chan struct{})}
	go w.read()
	return w, nil
}

// read turns every notification into a signal on changed.
func (w *netWatch) read() {
	defer close(w.done)
	buf := make([]byte, 16<<10)
	for !w.stop.Load() {
		_, _, err := unix.Recvfrom(w.sub, buf, 0)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue // the receive timeout, to look at stop
		}
		select { // a message, or ENOBUFS (notices lost): look again
		case w.changed <- struct{}{}:
		default:
		}
	}
}

// close stops the reader and closes the sockets.
func (w *netWatch) close() {
	w.stop.Store(true)
	<-w.done
	unix.Close(w.sub)
	unix.Close(w.dump)
}

// state dumps the links and addresses of the interfaces in want.
func (w *netWatch) state(want map[uint32]bool) (netState, error) {
	st := netState{ifaces: map[uint32]ifaceInfo{}, addrs: map[querydAddrkey]querydAddrKind{}, routes: map[querydDenykey]uint32{}}
	links, err := w.request(unix.RTM_GETLINK)
	if err != nil {
		return st, fmt.Errorf("netlink links: %w", err)
	}
	for _, m := range links {
		idx, info, lower, kind := parseLink(&m)
		if want[idx] {
			prev := st.ifaces[idx]
			info.vlanUppers = info.vlanUppers || prev.vlanUppers
			st.ifaces[idx] = info
		}
		if kind == "vlan" && want[lower] {
			info := st.ifaces[lower]
			info.vlanUppers = true
			st.ifaces[lower] = info
		}
	}
	addrs, err := w.request(unix.RTM_GETADDR)
	if err != nil {
		return st, fmt.Errorf("netlink addresses: %w", err)
	}
	for _, m := range addrs {
		idx, a, bcast, ok := parseAddr(&m)
		if !ok || !want[idx] {
			continue
		}
		st.addrs[querydAddrkey{Ifindex: idx, Addr: a.As16()}] = querydAddrKindADDR_LOCAL
		if bcast.IsValid() && bcast != a {
			st.addrs[querydAddrkey{Ifindex: idx, Addr: bcast.As16()}] = querydAddrKindADDR_BROADCAST
		}
	}
	rts, err := w.request(unix.RTM_GETROUTE)
	if err != nil {
		return st, fmt.Errorf("netlink routes: %w", err)
	}
	best := map[querydDenykey]route{}
	for _, m := range rts {
		k, r, ok := parseRoute(&m)
		if !ok {
			continue
		}
		if old, seen := best[k]; !seen || r.prio < old.prio {
			best[k] = r
		}
	}
	if len(best) > maxRoutes {
		st.full = true
		return st, nil
	}
	for k, r := range best {
		st.routes[k] = r.oif
	}
	return st, nil
}

// maxRoutes is the routes trie's size (MAX_ROUTES in bpf/consts.h;
// TestMaxRoutesMirrored checks they agree).
const maxRoutes = 65536

// parseRoute reads an RTM_NEWROUTE of the main table: its prefix and its
// output interface (0 for unreachable, blackhole, prohibit, several next
// hops: the program then passes, and the kernel decides).
func parseRoute(m *syscall.NetlinkMessage) (querydDenykey, route, bool) {
	var k querydDenykey
	if m.Header.Type != unix.RTM_NEWROUTE || len(m.Data) < unix.SizeofRtMsg {
		return k, route{}, false
	}
	family, dstLen, table, typ := m.Data[0], m.Data[1], uint32(m.Data[4]), m.Data[7]
	attrs, err := syscall.ParseNetlinkRouteAttr(m)
	if err != nil {
		return k, route{}, false
	}
	var r route
	var dst []byte
	for _, a := range attrs {
		switch a.Attr.Type {
		case unix.RTA_TABLE:
			if len(a.Value) >= 4 {
				table = binary.NativeEndian.Uint32(a.Value)
			}
		case unix.RTA_DST:
			dst = a.Value
		case unix.RTA_OIF:
			if len(a.Value) >= 4 {
				r.oif = binary.NativeEndian.Uint32(a.Value)
			}
		case unix.RTA_PRIORITY:
			if len(a.Value) >= 4 {
				r.prio = binary.NativeEndian.Uint32(a.Value)
			}
		case unix.RTA_MULTIPATH:
			r.oif = 0
		}
	}
	if table != unix.RT_TABLE_MAIN {
		return k, route{}, false
	}
	if typ != unix.RTN_UNICAST {
		r.oif = 0
	}
	switch family {
	case unix.AF_INET:
		k.Prefixlen = 96 + uint32(dstLen)
		k.Addr[10], k.Addr[11] = 0xff, 0xff
		copy(k.Addr[12:], dst)
	case unix.AF_INET6:
		k.Prefixlen = uint32(dstLen)
		copy(k.Addr[:], dst)
	default:
		return k, route{}, false
	}
	return k, r, true
}

// request sends a dump request of typ and returns the replies.
func (w *netWatch) request(typ uint16) ([]syscall.NetlinkMessage, error) {
	w.seq++
	req := make([]byte, unix.NLMSG_HDRLEN+4)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], typ)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], w.seq)
	req[unix.NLMSG_HDRLEN] = unix.AF_UNSPEC
	if err := unix.Sendto(w.dump, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	var out []syscall.NetlinkMessage
	buf := make([]byte, 64<<10)
	for {
		n, _, err := unix.Recvfrom(w.dump, buf, 0)
		if err != nil {
			return nil, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if m.Header.Seq != w.seq {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
						return nil, syscall.Errno(-e)
					}
				}
				return out, nil
			}
			m.Data = append([]byte(nil), m.Data...)
			out = append(out, m)
		}
	}
}

// parseLink reads an RTM_NEWLINK: the interface, its MAC, the interface it
// is on (IFLA_LINK) and its kind (IFLA_INFO_KIND: "vlan", ...).
func parseLink(m *syscall.NetlinkMessage) (idx uint32, info ifaceInfo, lower uint32, kind string) {
	if m.Header.Type != unix.RTM_NEWLINK || len(m.Data) < unix.SizeofIfInfomsg {
		return 0, info, 0, ""
	}
	idx = uint32(binary.NativeEndian.Uint32(m.Data[4:]))
	attrs, err := syscall.ParseNetlinkRouteAttr(m)
	if err != nil {
		return 0, info, 0, ""
	}
	for _, a := range attrs {
		switch a.Attr.Type {
		case unix.IFLA_ADDRESS:
			if len(a.Value) == 6 {
				copy(info.mac[:], a.Value)
			}
		case unix.IFLA_LINK:
			if len(a.Value) >= 4 {
				lower = binary.NativeEndian.Uint32(a.Value)
			}
		case unix.IFLA_LINKINFO:
			kind = infoKind(a.Value)
		}
	}
	return idx, info, lower, kind
}

// infoKind finds IFLA_INFO_KIND in a nested IFLA_LINKINFO.
func infoKind(b []byte) string {
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b))
		t := binary.NativeEndian.Uint16(b[2:])
		if l < 4 || l > len(b) {
			return ""
		}
		if t == unix.IFLA_INFO_KIND {
			v := b[4:l]
			for len(v) > 0 && v[len(v)-1] == 0 {
				v = v[:len(v)-1]
			}
			return string(v)
		}
		b = b[min((l+3)&^3, len(b)):]
	}
	return ""
}

// parseAddr reads an RTM_NEWADDR: the interface, the local address
// (IFA_LOCAL for IPv4, IFA_ADDRESS for IPv6) and the subnet broadcast
// (IPv4), unless it is tentative or failed duplicate address detection
// (the kernel does not accept datagrams to it yet).
func parseAddr(m *syscall.NetlinkMessage) (idx uint32, addr, bcast netip.Addr, ok bool) {
	if m.Header.Type != unix.RTM_NEWADDR || len(m.Data) < unix.SizeofIfAddrmsg {
		return 0, addr, bcast, false
	}
	family := m.Data[0]
	flags := uint32(m.Data[2])
	idx = binary.NativeEndian.Uint32(m.Data[4:])
	attrs, err := syscall.ParseNetlinkRouteAttr(m)
	if err != nil {
		return 0, addr, bcast, false
	}
	var local netip.Addr
	for _, a := range attrs {
		switch a.Attr.Type {
		case unix.IFA_BROADCAST:
			bcast, _ = netip.AddrFromSlice(a.Value)
		case unix.IFA_LOCAL:
			local, _ = netip.AddrFromSlice(a.Value)
		case unix.IFA_ADDRESS:
			addr, _ = netip.AddrFromSlice(a.Value)
		case unix.IFA_FLAGS:
			if len(a.Value) >= 4 {
				flags = binary.NativeEndian.Uint32(a.Value)
			}
		}
	}
	if flags&(unix.IFA_F_TENTATIVE|unix.IFA_F_DADFAILED) != 0 {
		return 0, addr, bcast, false
	}
	if family == unix.AF_INET && local.IsValid() {
		addr = local
	}
	if !addr.IsValid() {
		return 0, addr, bcast, false
	}
	// The kernel makes the subnet's all-ones address a broadcast route
	// whether IFA_BROADCAST is set or not (prefixes shorter than /31).
	if bits := int(m.Data[1]); family == unix.AF_INET && bits < 31 && !bcast.IsValid() {
		b := addr.As4()
		host := ^uint32(0) >> bits
		v := binary.BigEndian.Uint32(b[:]) | host
		binary.BigEndian.PutUint32(b[:], v)
		bcast = netip.AddrFrom4(b)
	}
	return idx, addr, bcast, true
}

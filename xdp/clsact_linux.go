//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Divert's egress program where the kernel has no tcx (before Linux 6.6):
// the same program (SchedCLS) as a cls_bpf filter in direct-action mode on
// the egress hook of a clsact qdisc, made with rtnetlink as tc(8) makes it
// (`tc qdisc add dev IF clsact; tc filter add dev IF egress pref 20804
// handle 0x5144 bpf direct-action fd N name queryd_divert_tc`). The
// program returns TC_ACT_UNSPEC: the next filter runs, as under tcx.
//
// Unlike a BPF link, a tc filter outlives the process that made it: a
// queryd killed with SIGKILL leaves it (and its own copy of the egress
// table) until the next start replaces it. Our filter is the one at
// clsactPrio and clsactHandle named clsactName; a filter of another name
// there is refused, never replaced. The clsact qdisc is deleted on close
// only when queryd made it and no filter is left on it.

// From linux/pkt_sched.h and linux/pkt_cls.h (x/sys/unix has none of them).
const (
	tcHClsact           = 0xFFFFFFF1 // TC_H_CLSACT: the clsact qdisc's parent
	tcHMinIngress       = 0xFFF2     // TC_H_MIN_INGRESS
	tcHMinEgress        = 0xFFF3     // TC_H_MIN_EGRESS
	tcaBPFFD            = 6          // TCA_BPF_FD
	tcaBPFName          = 7          // TCA_BPF_NAME
	tcaBPFFlags         = 8          // TCA_BPF_FLAGS
	tcaBPFFlagActDirect = 1          // TCA_BPF_FLAG_ACT_DIRECT
	sizeofTcMsg         = 20         // struct tcmsg
)

// Our filter's priority and handle on the egress hook: a priority below
// the 49152 tc(8) gives the first filter added without one, so it runs
// before those; tc shows it as "pref 20804 bpf ... handle 0x5144".
const (
	clsactPrio   = 0x5144
	clsactHandle = 0x5144
	clsactName   = "queryd_divert_tc"
)

// clsactFilter is the egress program attached to one interface as a tc
// filter; Close deletes it. Its rtnetlink socket, opened at the attach,
// stays in the interface's network namespace whichever thread closes it.
type clsactFilter struct {
	nl        *rtnl
	ifindex   int32
	ifname    string
	madeQdisc bool // the clsact qdisc is ours: deleted on Close when empty
}

// attachClsact attaches prog as our filter on the egress hook of ifname's
// clsact qdisc (made when there is none), in the caller's network
// namespace.
func attachClsact(ifindex int, ifname string, prog *ebpf.Program) (*clsactFilter, error) {
	nl, err := openRtnl()
	if err != nil {
		return nil, err
	}
	c := &clsactFilter{nl: nl, ifindex: int32(ifindex), ifname: ifname}
	qd := tcMsg(c.ifindex, 0xFFFF0000, tcHClsact, 0)
	_, err = nl.do(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_EXCL, qd, attr(unix.TCA_KIND, cstr("clsact")))
	switch {
	case err == nil:
		c.madeQdisc = true
	case !errors.Is(err, unix.EEXIST): // EEXIST: a clsact (or ingress) qdisc is there: ours to share
		nl.close()
		return nil, fmt.Errorf("add a clsact qdisc to %q: %w", ifname, err)
	}
	flags := uint16(unix.NLM_F_CREATE | unix.NLM_F_EXCL)
	if name, err := c.filterName(); err == nil {
		if name != clsactName {
			c.closeQdisc()
			nl.close()
			return nil, fmt.Errorf("%q egress: the tc filter at pref %d handle %#x is %q, not queryd's: not replaced", ifname, clsactPrio, clsactHandle, name)
		}
		flags = unix.NLM_F_CREATE // a killed queryd's: replace it
	}
	if err := c.add(prog, clsactName, flags); err != nil {
		c.closeQdisc()
		nl.close()
		return nil, fmt.Errorf("add the tc filter to %q egress (pref %d): %w", ifname, clsactPrio, err)
	}
	return c, nil
}

// add adds (or with flags lacking NLM_F_EXCL replaces) the filter at our
// priority and handle: prog, direct-action, named name.
func (c *clsactFilter) add(prog *ebpf.Program, name string, flags uint16) error {
	opts := attr(tcaBPFFD, u32(uint32(prog.FD())))
	opts = append(opts, attr(tcaBPFName, cstr(name))...)
	opts = append(opts, attr(tcaBPFFlags, u32(tcaBPFFlagActDirect))...)
	body := append(attr(unix.TCA_KIND, cstr("bpf")), attr(unix.TCA_OPTIONS, opts)...)
	_, err := c.nl.do(unix.RTM_NEWTFILTER, flags, c.filterMsg(), body)
	return err
}

// Close deletes our filter, then the clsact qdisc when queryd made it
// and no filter is left on it.
func (c *clsactFilter) Close() error {
	if c.nl == nil {
		return nil
	}
	defer func() { c.nl.close(); c.nl = nil }()
	_, err := c.nl.do(unix.RTM_DELTFILTER, 0, c.filterMsg(), attr(unix.TCA_KIND, cstr("bpf")))
	if err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENODEV) { // gone with its interface
		err = fmt.Errorf("delete the tc filter on %q egress (pref %d): %w", c.ifname, clsactPrio, err)
	} else {
		err = nil
	}
	c.closeQdisc()
	return err
}

// closeQdisc deletes the clsact qdisc if queryd made it and neither hook
// has a filter (someone else's filters stay, and so does the qdisc).
func (c *clsactFilter) closeQdisc() {
	if !c.madeQdisc {
		return
	}
	for _, minor := range []uint32{tcHMinIngress, tcHMinEgress} {
		msgs, err := c.nl.do(unix.RTM_GETTFILTER, unix.NLM_F_DUMP, tcMsg(c.ifindex, 0, tcHClsact&0xFFFF0000|minor, 0), nil)
		if err != nil || len(msgs) > 0 {
			return
		}
	}
	c.nl.do(unix.RTM_DELQDISC, 0, tcMsg(c.ifindex, 0xFFFF0000, tcHClsact, 0), nil)
	c.madeQdisc = false
}

// filterMsg is the tcmsg naming our filter: egress, our priority, every
// protocol (ETH_P_ALL), our handle.
func (c *clsactFilter) filterMsg() []byte {
	proto := uint32(binary.NativeEndian.Uint16(binary.BigEndian.AppendUint16(nil, unix.ETH_P_ALL))) // htons
	return tcMsg(c.ifindex, clsactHandle, tcHClsact&0xFFFF0000|tcHMinEgress, clsactPrio<<16|proto)
}

// filterName is the name (TCA_BPF_NAME) of the filter at our priority and
// handle; an error when there is none.
func (c *clsactFilter) filterName() (string, error) {
	msgs, err := c.nl.do(unix.RTM_GETTFILTER, 0, c.filterMsg(), attr(unix.TCA_KIND, cstr("bpf")))
	if err != nil {
		return "", err
	}
	for _, m := range msgs {
		if len(m.Data) < sizeofTcMsg {
			continue
		}
		if opts, ok := findAttr(m.Data[sizeofTcMsg:], unix.TCA_OPTIONS); ok {
			if name, ok := findAttr(opts, tcaBPFName); ok {
				return trimNUL(name), nil
			}
		}
		return "", nil // a filter there, without a name
	}
	return "", unix.ENOENT
}

// tcMsg is a struct tcmsg.
func tcMsg(ifindex int32, handle, parent, info uint32) []byte {
	b := make([]byte, sizeofTcMsg)
	b[0] = unix.AF_UNSPEC
	binary.NativeEndian.PutUint32(b[4:], uint32(ifindex))
	binary.NativeEndian.PutUint32(b[8:], handle)
	binary.NativeEndian.PutUint32(b[12:], parent)
	binary.NativeEndian.PutUint32(b[16:], info)
	return b
}

// attr is one netlink attribute, padded to 4 bytes.
func attr(typ uint16, val []byte) []byte {
	n := unix.SizeofRtAttr + len(val)
	b := make([]byte, (n+3)&^3)
	binary.NativeEndian.PutUint16(b, uint16(n))
	binary.NativeEndian.PutUint16(b[2:], typ)
	copy(b[unix.SizeofRtAttr:], val)
	return b
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

func cstr(s string) []byte { return append([]byte(s), 0) }

func trimNUL(b []byte) string {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return string(b)
}

// findAttr is the value of the first attribute of type typ in b.
func findAttr(b []byte, typ uint16) ([]byte, bool) {
	for len(b) >= unix.SizeofRtAttr {
		l := int(binary.NativeEndian.Uint16(b))
		if l < unix.SizeofRtAttr || l > len(b) {
			return nil, false
		}
		if binary.NativeEndian.Uint16(b[2:])&^unix.NLA_F_NESTED == typ {
			return b[unix.SizeofRtAttr:l], true
		}
		b = b[min((l+3)&^3, len(b)):]
	}
	return nil, false
}

// rtnl is an rtnetlink socket for tc requests, one at a time.
type rtnl struct {
	fd  int
	seq uint32
}

func openRtnl() (*rtnl, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	// The kernel's reason in the error (extended ACK), without our request echoed.
	unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_EXT_ACK, 1)
	unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_CAP_ACK, 1)
	tv := unix.NsecToTimeval(5e9)
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netlink bind: %w", err)
	}
	return &rtnl{fd: fd}, nil
}

func (nl *rtnl) close() { unix.Close(nl.fd) }

// do sends one request (hdr, then attrs) and returns the kernel's
// messages: the dump (NLM_F_DUMP) or the reply of a get; the error of
// the ACK, with the kernel's reason when it gives one.
func (nl *rtnl) do(typ, flags uint16, hdr, attrs []byte) ([]syscall.NetlinkMessage, error) {
	nl.seq++
	req := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(hdr)+len(attrs))
	req = append(append(req, hdr...), attrs...)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], typ)
	binary.NativeEndian.PutUint16(req[6:], flags|unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(req[8:], nl.seq)
	if err := unix.Sendto(nl.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("netlink send: %w", err)
	}
	var out []syscall.NetlinkMessage
	buf := make([]byte, 64<<10)
	for {
		n, _, err := unix.Recvfrom(nl.fd, buf, 0)
		if err != nil {
			return nil, fmt.Errorf("netlink receive: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, fmt.Errorf("netlink receive: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Seq != nl.seq {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				return out, ackError(m)
			}
			m.Data = append([]byte(nil), m.Data...)
			out = append(out, m)
		}
	}
}

// ackError is the error of an NLMSG_ERROR (nil: the ACK of a success),
// with the extended ACK's message when there is one.
func ackError(m syscall.NetlinkMessage) error {
	if len(m.Data) < 4 {
		return errors.New("netlink: a short ACK")
	}
	e := int32(binary.NativeEndian.Uint32(m.Data))
	if e == 0 {
		return nil
	}
	err := error(syscall.Errno(-e))
	// After the error: our request (its header alone when capped), then the TLVs.
	if m.Header.Flags&unix.NLM_F_ACK_TLVS == 0 || len(m.Data) < 4+unix.NLMSG_HDRLEN {
		return err
	}
	skip := unix.NLMSG_HDRLEN
	if m.Header.Flags&unix.NLM_F_CAPPED == 0 {
		skip = (int(binary.NativeEndian.Uint32(m.Data[4:])) + 3) &^ 3
	}
	if 4+skip <= len(m.Data) {
		if msg, ok := findAttr(m.Data[4+skip:], unix.NLMSGERR_ATTR_MSG); ok {
			err = fmt.Errorf("%s: %w", trimNUL(msg), err)
		}
	}
	return err
}

//go:build linux

package responder

import (
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const batchSupported = true

// Batch path sizes.
const (
	batchSize   = 64  // datagrams per recvmmsg
	sendCap     = 256 // messages per sendmmsg
	sendIovCap  = 512 // datagrams per sendmmsg (a GSO message carries several)
	ctrlSize    = 128 // control data per received datagram (pktinfo, overflow counter)
	replyCtrlSz = 64  // control data per reply (pktinfo, UDP_SEGMENT)
)

var (
	_ listener = (*batchListener)(nil)
	_ Sender   = (*fdSender)(nil)
)

// mmsghdr is struct mmsghdr: one message of recvmmsg/sendmmsg.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
}

// batchListener serves one address with one SO_REUSEPORT socket per worker,
// read outside the Go netpoller by the process's receive loops (reactor.go)
// in batches: recvmmsg in, sendmmsg out.
type batchListener struct {
	addr    netip.AddrPort
	v6      bool
	fds     []int
	pfds    []int       // the proven sources' sockets (steer_linux.go); none unsteered
	steered io.Closer   // what steers them, closed with the sockets
	gso     atomic.Bool // multi-datagram answers leave as one UDP GSO send
	started atomic.Bool
	closing atomic.Bool
	socks   []*rsock // the sockets' registrations with the receive loops, once started
}

func listenBatch(ap netip.AddrPort, cfg SocketConfig) (listener, error) {
	l := &batchListener{v6: ap.Addr().Is6() && !ap.Addr().Is4In6()}
	if ap.Port() == 0 {
		portZero.Lock()
		defer portZero.Unlock()
		var err error
		if ap, err = freePort(ap, l.v6); err != nil {
			return nil, err
		}
	}
	for i := 0; i < cfg.Workers; i++ {
		fd, err := openBatchSocket(ap, l.v6, cfg.RecvBuffer)
		if err != nil {
			l.close()
			return nil, err
		}
		l.fds = append(l.fds, fd)
	}
	l.addr = ap
	if cfg.Steer != nil {
		if err := l.steer(cfg); err != nil {
			l.close()
			return nil, err
		}
	}
	l.gso.Store(!cfg.DisableGSO && gsoSupported(l.fds[0]))
	return l, nil
}

func openBatchSocket(ap netip.AddrPort, v6 bool, rcvbuf int) (int, error) {
	family := unix.AF_INET
	if v6 {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	opts := [][3]int{{unix.SOL_SOCKET, unix.SO_REUSEPORT, 1}, {unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1}}
	if v6 {
		opts = append(opts, [3]int{unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1}, [3]int{unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1})
	} else {
		opts = append(opts, [3]int{unix.IPPROTO_IP, unix.IP_PKTINFO, 1})
	}
	for _, o := range opts {
		if err := unix.SetsockoptInt(fd, o[0], o[1], o[2]); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("setsockopt %d/%d: %w", o[0], o[1], err)
		}
	}
	if rcvbuf > 0 {
		if err := setRecvBuffer(fd, rcvbuf); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("SO_RCVBUF: %w", err)
		}
	}
	if err := unix.Bind(fd, sockaddr(ap, v6)); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	return fd, nil
}

func boundAddr(fd int) (netip.AddrPort, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("getsockname: %w", err)
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)), nil
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port)), nil
	}
	return netip.AddrPort{}, fmt.Errorf("getsockname: unexpected %T", sa)
}

func (l *batchListener) localAddr() netip.AddrPort { return l.addr }

func (l *batchListener) sender() Sender { return &fdSender{fd: l.fds[0], v6: l.v6} }

// close hands the sockets back to their receive loops, which stop reading
// them and close them (the socket set's wait group says when); sockets whose
// loop never started are closed here.
func (l *batchListener) close() {
	if l.closing.Swap(true) {
		return
	}
	if l.steered != nil {
		l.steered.Close()
	}
	if !l.started.Load() {
		for _, fd := range append(l.fds, l.pfds...) {
			unix.Close(fd)
		}
		return
	}
	for _, s := range l.socks {
		s.loop.remove(s)
	}
}

// start registers the sockets with the process's receive loops, each socket
// of the address with a different loop.
func (l *batchListener) start(set *socketSet, p pipeline) {
	r, err := loopsFor(set.cfg.Socket, set.cfg.Logger)
	if err != nil {
		set.cfg.Logger.Error("receive loops", "err", err)
		return
	}
	l.started.Store(true)
	base := int(r.next.Add(1))
	for i, fd := range append(l.fds, l.pfds...) {
		loop := r.loops[(base+i)%len(r.loops)]
		s := &rsock{fd: fd, first: i >= len(l.fds), l: l, p: p, ss: p.newSession(), back: l.sender(), gso: &l.gso, wg: &set.wg, loop: loop}
		set.wg.Add(1)
		if err := loop.add(s, set.cfg.MaxRequest); err != nil {
			set.wg.Done()
			set.cfg.Logger.Error("receive loop", "udp", l.addr.String(), "err", err)
			unix.Close(fd)
			continue
		}
		l.socks = append(l.socks, s)
	}
}

// batchWorker is one socket's receive loop with every buffer allocated once.
type batchWorker struct {
	fd      int
	maxReq  int
	msgs    [batchSize]mmsghdr
	iovs    [batchSize]unix.Iovec
	names   [batchSize]unix.RawSockaddrInet6
	ctrl    []byte // batchSize × ctrlSize
	bufs    []byte // batchSize × maxReq
	scratch []byte // batchSize × ScratchSize
	rctrl   []byte // batchSize × replyCtrlSz
	replies
	ovfl uint32 // the kernel's last drop count on this socket
}

func newBatchWorker(fd, maxReq int) *batchWorker {
	w := &batchWorker{
		fd:      fd,
		maxReq:  maxReq,
		ctrl:    make([]byte, batchSize*ctrlSize),
		bufs:    make([]byte, batchSize*maxReq),
		scratch: make([]byte, batchSize*ScratchSize),
		rctrl:   make([]byte, batchSize*replyCtrlSz),
	}
	for i := range w.msgs {
		w.iovs[i].Base = &w.bufs[i*maxReq]
		w.iovs[i].SetLen(maxReq)
		h := &w.msgs[i].hdr
		h.Name = (*byte)(unsafe.Pointer(&w.names[i]))
		h.Iov = &w.iovs[i]
		h.SetIovlen(1)
		h.Control = &w.ctrl[i*ctrlSize]
	}
	w.reset(batchSize)
	return w
}

// reset restores the lengths the kernel overwrote in the first n messages.
func (w *batchWorker) reset(n int) {
	for i := 0; i < n; i++ {
		h := &w.msgs[i].hdr
		h.Namelen = unix.SizeofSockaddrInet6
		h.SetControllen(ctrlSize)
		h.Flags = 0
	}
}

// serve reads socket s until it has nothing more to read (or rounds
// batches, so that one busy socket cannot starve the loop's others) and
// answers every datagram, the replies of each batch leaving in one sendmmsg.
func (w *batchWorker) serve(s *rsock, rounds int) {
	w.fd, w.gso, w.ovfl = s.fd, s.gso, s.ovfl
	w.drain(s, rounds)
	s.ovfl = w.ovfl
}

func (w *batchWorker) drain(s *rsock, rounds int) {
	for ; rounds > 0; rounds-- {
		r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(w.fd), uintptr(unsafe.Pointer(&w.msgs[0])),
			batchSize, unix.MSG_DONTWAIT, 0, 0)
		if e != 0 {
			if e != unix.EAGAIN && e != unix.EINTR {
				s.ss.stats.recvErr.Add(1)
			}
			return
		}
		n := int(r)
		if n == 0 {
			return
		}
		s.p.beginBatch(s.ss, time.Now())
		for i := 0; i < n; i++ {
			w.handle(s.p, s.ss, i, s.back)
		}
		w.countOverflow(s.ss, n)
		s.ss.flush()
		w.flush(s.ss)
		w.reset(n)
		if n < batchSize {
			return
		}
	}
}

// handle answers received message i and queues its replies.
func (w *batchWorker) handle(p pipeline, ss *session, i int, back Sender) {
	m := &w.msgs[i]
	if m.hdr.Flags&unix.MSG_TRUNC != 0 {
		ss.stats.trunc.Add(1)
		return
	}
	req := w.bufs[i*w.maxReq : i*w.maxReq+int(m.n)]
	oob := w.ctrl[i*ctrlSize : i*ctrlSize+int(m.hdr.Controllen)]
	src := sockaddrAddrPort(&w.names[i])
	out := p.process(ss, req, w.scratch[i*ScratchSize:(i+1)*ScratchSize], src, oob, back)
	if len(out) == 0 {
		return
	}
	rc := replyControl(w.rctrl[i*replyCtrlSz:i*replyCtrlSz:(i+1)*replyCtrlSz], oob)
	w.queueAnswer(w, ss, out, (*byte)(unsafe.Pointer(&w.names[i])), m.hdr.Namelen, rc)
}

// flushReplies is flush: the send batch is full.
func (w *batchWorker) flushReplies(ss *session) { w.flush(ss) }

// flush sends the queued replies; a datagram the kernel refuses is counted
// and skipped. A GSO message the kernel cannot segment is sent datagram by
// datagram, and GSO turned off for the address.
func (w *batchWorker) flush(ss *session) {
	for off := 0; off < w.ns; {
		r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(w.fd), uintptr(unsafe.Pointer(&w.smsgs[off])),
			uintptr(w.ns-off), 0, 0, 0)
		switch {
		case e == unix.EINTR:
		case e != 0 && w.sgso[off] && gsoRefused(e):
			// Sent one by one; when that works, GSO was what the kernel
			// refused (not, say, a destination port 0), so stop using it.
			h := &w.smsgs[off].hdr
			failed := sendEach(w.fd, h)
			if failed < int(h.Iovlen) {
				ss.stats.gsoRefused.Add(1)
				w.gso.Store(false)
			}
			ss.stats.sendErr.Add(uint64(failed))
			off++
		case e != 0:
			ss.stats.sendErr.Add(1)
			off++
		default:
			off += int(r)
		}
	}
	w.ns, w.niov = 0, 0
}

// countOverflow reads the kernel's drop counter (SO_RXQ_OVFL) from the last
// of the n received messages that carries it.
func (w *batchWorker) countOverflow(ss *session, n int) {
	for i := n - 1; i >= 0; i-- {
		oob := w.ctrl[i*ctrlSize : i*ctrlSize+int(w.msgs[i].hdr.Controllen)]
		if v, ok := rxqOverflow(oob); ok {
			if v > w.ovfl {
				ss.stats.overflow.Add(uint64(v - w.ovfl))
			}
			w.ovfl = v
			return
		}
	}
}

// rxqOverflow finds the SO_RXQ_OVFL counter in control data.
func rxqOverflow(oob []byte) (uint32, bool) {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(oob) {
			return 0, false
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_RXQ_OVFL && l >= unix.CmsgLen(4) {
			return binary.NativeEndian.Uint32(oob[unix.CmsgLen(0):]), true
		}
		oob = oob[min(unix.CmsgSpace(l-unix.SizeofCmsghdr), len(oob)):]
	}
	return 0, false
}

// sockaddrAddrPort reads a received sockaddr_in or sockaddr_in6.
func sockaddrAddrPort(sa *unix.RawSockaddrInet6) netip.AddrPort {
	if sa.Family == unix.AF_INET {
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		p := (*[2]byte)(unsafe.Pointer(&sa4.Port))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), binary.BigEndian.Uint16(p[:]))
	}
	p := (*[2]byte)(unsafe.Pointer(&sa.Port))
	return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), binary.BigEndian.Uint16(p[:]))
}

// fdSender sends through a batch socket (relay replies, heartbeats).
type fdSender struct {
	fd int
	v6 bool
}

func (s *fdSender) SendFrom(b []byte, local netip.Addr, dst netip.AddrPort) error {
	var oob []byte
	if local.IsValid() {
		oob = controlFrom(make([]byte, 0, replyCtrlSz), local)
	}
	var sa unix.Sockaddr
	if s.v6 {
		sa = &unix.SockaddrInet6{Port: int(dst.Port()), Addr: dst.Addr().As16()}
	} else {
		if !dst.Addr().Unmap().Is4() {
			return fmt.Errorf("send to %s from an IPv4 socket", dst)
		}
		sa = &unix.SockaddrInet4{Port: int(dst.Port()), Addr: dst.Addr().Unmap().As4()}
	}
	_, err := unix.SendmsgN(s.fd, b, oob, sa, 0)
	return err
}

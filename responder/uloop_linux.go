//go:build linux

package responder

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The uring layer's receive loops (socket = "uring"): the batch layer's
// sockets, read and answered through one io_uring per loop. Each socket has
// one multishot recvmsg armed, filling buffers of its loop's provided-buffer
// ring; each reply is one sendmsg SQE. One io_uring_enter submits every
// reply of a round, whichever sockets they leave from, and waits for the
// next datagrams: where the batch layer pays a recvmmsg and a sendmmsg per
// socket it visits (host mode spreads a load over many sockets, a few
// datagrams each), a round costs one system call for all of them.
//
// Sends carry MSG_DONTWAIT: the kernel issues each during io_uring_enter and
// fails it there (counted as a send error) rather than waiting for room in
// the socket's send buffer, so a round's replies, names and scratch are
// free again when io_uring_enter returns. Successful sends post no
// completion (IOSQE_CQE_SKIP_SUCCESS); failed ones do, and are handled before
// anything of theirs is reused.

const (
	uringSQ       = 1024    // SQEs per loop
	uringCQ       = 8192    // CQEs per loop: above the buffers in flight
	uringBufs     = 1024    // buffers per buffer group, at most (a power of two)
	uringGroupMem = 4 << 20 // a buffer group's bytes, at most (fewer buffers for large requests)
	uringRound    = 256     // datagrams answered per round, at most
	uringNameLen  = 32      // the name's room in a buffer (sockaddr_in6 is 28)
	uringCtrlOff  = recvmsgOutSize + uringNameLen
	uringDataOff  = uringCtrlOff + ctrlSize
	uringErrPause = 10 * time.Millisecond // after an io_uring_enter error, before the next
)

// user_data: the kind in the top byte; the socket's generation and slot;
// for a send the message index, for a receive its buffer group.
const (
	udRecv uint64 = iota + 1
	udSend
	udWake
	udCancel
	udDone // a send error already handled
)

func udPack(kind uint64, gen uint32, slot int, msg int) uint64 {
	return kind<<56 | uint64(msg&0xffff)<<40 | uint64(gen&0xff)<<32 | uint64(uint32(slot))
}

func udKind(ud uint64) uint64 { return ud >> 56 }
func udSlot(ud uint64) int    { return int(uint32(ud)) }
func udGen(ud uint64) uint32  { return uint32(ud>>32) & 0xff }
func udMsg(ud uint64) int     { return int(ud>>40) & 0xffff }

// ugroup is one buffer group: a buffer ring sized for one largest request.
type ugroup struct {
	ring   *bufRing
	maxReq int
}

// uaddReq asks a loop to take a socket; done carries the answer.
type uaddReq struct {
	s      *rsock
	maxReq int
	done   chan error
}

// uheld is a buffer a round's datagram is in, handed back after the round.
type uheld struct {
	g  *ugroup
	id uint16
}

// uloop is one uring receive loop.
type uloop struct {
	r       *uring
	wake    int
	wakeBuf []byte // the eventfd's counter, read by the kernel (outside the Go heap)
	log     *slog.Logger
	tmpl    unix.Msghdr // the multishot receives' template: name and control room

	mu   sync.Mutex
	adds []uaddReq
	gone []*rsock
	slotTable
	gens []uint32 // by slot: bumped when a socket leaves it

	groups map[int]*ugroup // by largest request
	byGID  []*ugroup

	// The round.
	rounds  uint64    // rounds begun
	now     time.Time // when the round began
	held    []uheld
	touched []*rsock
	rearm   []*rsock
	closed  []*rsock // sockets whose receive ended, closed after the round's sends
	nd      int      // datagrams answered this round
	scratch []byte   // uringRound × ScratchSize
	rctrl   []byte   // uringRound × replyCtrlSz
	replies
	owner [sendCap]*rsock // the socket each queued message leaves from
	owned int             // messages whose owner is set
	cur   *rsock          // the socket whose answer is being queued
}

// newULoop sets up a loop's ring, on the thread that will run it.
func newULoop(log *slog.Logger) (*uloop, error) {
	r, err := newUring(uringSQ, uringCQ)
	if err != nil {
		return nil, err
	}
	lp := &uloop{r: r, wake: -1, log: log, groups: map[int]*ugroup{},
		scratch: make([]byte, uringRound*ScratchSize), rctrl: make([]byte, uringRound*replyCtrlSz)}
	lp.tmpl.Namelen = uringNameLen
	lp.tmpl.SetControllen(ctrlSize)
	// A blocking eventfd: io_uring fails a read of a non-blocking one
	// (EAGAIN) instead of waiting for it.
	if lp.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC); err != nil {
		lp.close()
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if lp.wakeBuf, err = unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS); err != nil {
		lp.close()
		return nil, fmt.Errorf("mmap: %w", err)
	}
	lp.armWake()
	if err := lp.r.enter(false); err != nil {
		lp.close()
		return nil, fmt.Errorf("%w: %w", errUringUnsupported, err)
	}
	return lp, nil
}

func (lp *uloop) close() {
	if lp.wake >= 0 {
		unix.Close(lp.wake)
	}
	if lp.wakeBuf != nil {
		unix.Munmap(lp.wakeBuf)
	}
	lp.r.close()
}

// add registers s with the loop and waits for the loop to arm its receive.
func (lp *uloop) add(s *rsock, maxReq int) error {
	done := make(chan error, 1)
	lp.mu.Lock()
	lp.adds = append(lp.adds, uaddReq{s: s, maxReq: maxReq, done: done})
	lp.mu.Unlock()
	lp.poke()
	return <-done
}

// remove has the loop cancel s's receive and close it.
func (lp *uloop) remove(s *rsock) {
	s.closing.Store(true)
	lp.mu.Lock()
	lp.gone = append(lp.gone, s)
	lp.mu.Unlock()
	lp.poke()
}

func (lp *uloop) poke() {
	one := [8]byte{1}
	unix.Write(lp.wake, one[:])
}

// sqe returns a free SQE, submitting the filled ones first when none is.
func (lp *uloop) sqe() *sqe {
	if lp.r.sqeFree() == 0 {
		lp.submit()
	}
	return lp.r.next()
}

// submit hands the filled SQEs to the kernel now and handles the failed
// sends among them while their messages are intact.
func (lp *uloop) submit() {
	if err := lp.r.enter(false); err != nil {
		lp.log.Error("uring receive loop", "err", err)
	}
	lp.sendErrors()
}

func (lp *uloop) armWake() {
	e := lp.sqe()
	e.opcode, e.fd = opRead, int32(lp.wake)
	e.addr, e.len = uint64(uintptr(unsafe.Pointer(&lp.wakeBuf[0]))), 8
	e.userData = udWake << 56
}

// arm starts s's multishot receive.
func (lp *uloop) arm(s *rsock) {
	e := lp.sqe()
	e.opcode, e.fd, e.flags, e.ioprio = opRecvmsg, int32(s.fd), sqeBufferSelect, recvMultishot
	e.addr = uint64(uintptr(unsafe.Pointer(&lp.tmpl)))
	e.bufGroup = s.ug.ring.gid
	e.userData = udPack(udRecv, s.gen, s.slot, int(s.ug.ring.gid))
	s.armed = true
}

func (lp *uloop) run() {
	for {
		if err := lp.r.enter(lp.r.cqReady() == 0); err != nil {
			lp.log.Error("uring receive loop", "err", err)
			time.Sleep(uringErrPause)
		}
		lp.sendErrors()
		lp.closeEnded()
		lp.release()
		lp.rounds++
		lp.now = time.Now() // every socket's batch of the round
		lp.harvest()
		lp.endRound()
		if len(lp.closed) > 0 { // submit their last replies, then close them
			lp.submit()
			lp.closeEnded()
		}
	}
}

// sendErrors handles the failed sends waiting in the completion queue
// (marking them done): their messages are still those they were queued as.
func (lp *uloop) sendErrors() {
	n := lp.r.cqReady()
	for i := uint32(0); i < n; i++ {
		c := lp.r.cqe(i)
		if udKind(c.userData) != udSend {
			continue
		}
		s := lp.sock(c.userData)
		k := udMsg(c.userData)
		if s != nil {
			lp.sendFailed(s, k, unix.Errno(-c.res))
		}
		c.userData = udDone << 56
	}
}

// sendFailed counts failed message k of s; a GSO message is sent again
// datagram by datagram and, when that works, GSO turned off for the address.
func (lp *uloop) sendFailed(s *rsock, k int, e unix.Errno) {
	h := &lp.smsgs[k].hdr
	if !lp.sgso[k] || !gsoRefused(e) {
		s.ss.stats.sendErr.Add(uint64(max(int(h.Iovlen), 1)))
		return
	}
	failed := sendEach(s.fd, h)
	if failed < int(h.Iovlen) {
		s.ss.stats.gsoRefused.Add(1)
		s.gso.Store(false)
	}
	s.ss.stats.sendErr.Add(uint64(failed))
}

// release hands the last round's buffers back and re-arms the receives that
// ended (out of buffers, or an error).
func (lp *uloop) release() {
	for _, h := range lp.held {
		h.g.ring.put(h.id)
	}
	lp.held = lp.held[:0]
	for _, g := range lp.groups {
		g.ring.publish()
	}
	lp.nd = 0
	for _, s := range lp.rearm {
		if !s.closing.Load() && !s.armed {
			lp.arm(s)
		}
	}
	lp.rearm = lp.rearm[:0]
}

// harvest handles the waiting completions: up to uringRound datagrams.
func (lp *uloop) harvest() {
	n := lp.r.cqReady()
	var i uint32
	for ; i < n && lp.nd < uringRound; i++ {
		c := *lp.r.cqe(i)
		switch udKind(c.userData) {
		case udRecv:
			lp.onRecv(c)
		case udWake:
			lp.onWake()
		}
	}
	lp.r.consume(i)
}

// endRound counts what the round's sockets did and queues its replies'
// SQEs (submitted by the next io_uring_enter).
func (lp *uloop) endRound() {
	for _, s := range lp.touched {
		if v, ok := rxqOverflow(s.lastOOB); ok {
			if v > s.ovfl {
				s.ss.stats.overflow.Add(uint64(v - s.ovfl))
			}
			s.ovfl = v
		}
		s.lastOOB = nil
		s.ss.flush()
	}
	lp.touched = lp.touched[:0]
	lp.queueSends()
}

// sock returns the socket of a completion, or nil when it is gone.
func (lp *uloop) sock(ud uint64) *rsock {
	slot := udSlot(ud)
	if slot >= len(lp.slots) || lp.gens[slot] != udGen(ud) {
		return nil
	}
	return lp.slots[slot]
}

// onRecv answers one received datagram, or handles its receive's end.
func (lp *uloop) onRecv(c cqe) {
	s := lp.sock(c.userData)
	if s == nil { // a closed socket's: only its buffer to hand back
		if g := udMsg(c.userData); c.flags&cqeFBuffer != 0 && g < len(lp.byGID) {
			lp.held = append(lp.held, uheld{g: lp.byGID[g], id: uint16(c.flags >> 16)})
		}
		return
	}
	if c.flags&cqeFMore == 0 {
		s.armed = false
	}
	if c.flags&cqeFBuffer != 0 {
		id := uint16(c.flags >> 16)
		lp.held = append(lp.held, uheld{g: s.ug, id: id})
		if c.res > 0 && !s.closing.Load() {
			lp.answer(s, s.ug.ring.buf(id)[:c.res])
		}
	}
	if s.armed {
		return
	}
	switch {
	case s.closing.Load():
		lp.closeSock(s)
	case c.res < 0 && c.res != -int32(unix.ENOBUFS):
		s.ss.stats.recvErr.Add(1)
		fallthrough
	default:
		lp.rearm = append(lp.rearm, s)
	}
}

// answer serves the datagram in buffer b (io_uring_recvmsg_out, name,
// control, payload) and queues its replies.
func (lp *uloop) answer(s *rsock, b []byte) {
	if len(b) < uringDataOff {
		return
	}
	namelen := *(*uint32)(unsafe.Pointer(&b[0]))
	ctrllen := *(*uint32)(unsafe.Pointer(&b[4]))
	flags := *(*uint32)(unsafe.Pointer(&b[12]))
	if s.round != lp.rounds {
		s.round = lp.rounds
		s.p.beginBatch(s.ss, lp.now)
		lp.touched = append(lp.touched, s)
	}
	oob := b[uringCtrlOff : uringCtrlOff+min(int(ctrllen), ctrlSize)]
	s.lastOOB = oob
	if flags&unix.MSG_TRUNC != 0 {
		s.ss.stats.trunc.Add(1)
		return
	}
	i := lp.nd
	lp.nd++
	src := sockaddrAddrPort((*unix.RawSockaddrInet6)(unsafe.Pointer(&b[recvmsgOutSize])))
	out := s.p.process(s.ss, b[uringDataOff:], lp.scratch[i*ScratchSize:(i+1)*ScratchSize], src, oob, s.back)
	if len(out) == 0 {
		return
	}
	rc := replyControl(lp.rctrl[i*replyCtrlSz:i*replyCtrlSz:(i+1)*replyCtrlSz], oob)
	lp.cur = s
	lp.replies.gso = s.gso
	lp.queueAnswer(lp, s.ss, out, &b[recvmsgOutSize], min(namelen, uringNameLen), rc)
	for ; lp.owned < lp.ns; lp.owned++ {
		lp.owner[lp.owned] = s
	}
}

// flushReplies submits the queued replies now: the batch is full.
func (lp *uloop) flushReplies(*session) {
	for ; lp.owned < lp.ns; lp.owned++ {
		lp.owner[lp.owned] = lp.cur
	}
	lp.queueSends()
	lp.submit()
}

// queueSends fills one sendmsg SQE per queued message and empties the batch.
func (lp *uloop) queueSends() {
	for k := 0; k < lp.ns; k++ {
		s := lp.owner[k]
		e := lp.sqe()
		e.opcode, e.fd, e.flags = opSendmsg, int32(s.fd), sqeCQESkipSuccess
		e.addr = uint64(uintptr(unsafe.Pointer(&lp.smsgs[k].hdr)))
		e.opFlags = unix.MSG_DONTWAIT
		e.userData = udPack(udSend, s.gen, s.slot, k)
	}
	lp.ns, lp.niov, lp.owned = 0, 0, 0
}

// onWake takes the registrations and removals asked for, and re-arms the
// eventfd's read.
func (lp *uloop) onWake() {
	lp.mu.Lock()
	adds, gone := lp.adds, lp.gone
	lp.adds, lp.gone = nil, nil
	lp.mu.Unlock()
	for _, a := range adds {
		a.done <- lp.register(a.s, a.maxReq)
	}
	for _, s := range gone {
		if s.armed {
			e := lp.sqe()
			e.opcode, e.fd, e.flags = opAsyncCancel, -1, sqeCQESkipSuccess
			e.addr = udPack(udRecv, s.gen, s.slot, int(s.ug.ring.gid))
			e.userData = udCancel << 56
		} else {
			lp.closeSock(s)
		}
	}
	lp.armWake()
}

// register gives s a slot and its buffer group, and arms its receive.
func (lp *uloop) register(s *rsock, maxReq int) error {
	g := lp.groups[maxReq]
	if g == nil {
		size := (uringDataOff + maxReq + 63) &^ 63
		ring, err := lp.r.newBufRing(uint16(len(lp.byGID)), groupBuffers(size), size)
		if err != nil {
			return err
		}
		g = &ugroup{ring: ring, maxReq: maxReq}
		lp.groups[maxReq] = g
		lp.byGID = append(lp.byGID, g)
	}
	s.ug = g
	lp.put(s)
	for len(lp.gens) < len(lp.slots) {
		lp.gens = append(lp.gens, 0)
	}
	s.gen = lp.gens[s.slot]
	lp.arm(s)
	return nil
}

// groupBuffers returns how many buffers of size bytes a group has: a power
// of two, at most uringBufs and uringGroupMem bytes, at least 16.
func groupBuffers(size int) int {
	n := uringBufs
	for n > 16 && n*size > uringGroupMem {
		n /= 2
	}
	return n
}

// closeSock closes s, whose receive has ended, once the replies queued
// from it have been submitted (its descriptor is not reused before).
func (lp *uloop) closeSock(s *rsock) {
	if lp.slots[s.slot] == s && !s.ended {
		s.ended = true
		lp.closed = append(lp.closed, s)
	}
}

// closeEnded frees the slots of the sockets closeSock took and closes them.
func (lp *uloop) closeEnded() {
	for _, s := range lp.closed {
		lp.drop(s.slot)
		lp.gens[s.slot]++
		unix.Close(s.fd)
		s.wg.Done()
	}
	lp.closed = lp.closed[:0]
}

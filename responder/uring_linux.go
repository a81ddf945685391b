//go:build linux

package responder

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A minimal io_uring (Linux 6.1+): the submission and completion rings, the
// few operations the uring receive loops use, and one provided-buffer ring
// per buffer group. The layouts are the kernel's uapi (linux/io_uring.h),
// the same on every 64-bit architecture. No Go io_uring library is among
// the project's chosen dependencies; this is the part of liburing queryd
// needs, and nothing more.

// io_uring opcodes, SQE flags and setup, enter and CQE flags used here.
const (
	opSendmsg     = 9
	opRecvmsg     = 10
	opAsyncCancel = 14
	opRead        = 22

	sqeBufferSelect   = 1 << 5
	sqeCQESkipSuccess = 1 << 6

	setupCQSize        = 1 << 3
	setupSubmitAll     = 1 << 7
	setupCoopTaskrun   = 1 << 8
	setupSingleIssuer  = 1 << 12
	setupDeferTaskrun  = 1 << 13
	enterGetEvents     = 1 << 0
	featSingleMmap     = 1 << 0
	featNoDrop         = 1 << 1
	featCQESkip        = 1 << 11
	recvMultishot      = 1 << 1
	cqeFBuffer         = 1 << 0
	cqeFMore           = 1 << 1
	registerPbufRing   = 22
	offSQRing          = 0
	offCQRing          = 0x8000000
	offSQEs            = 0x10000000
	recvmsgOutSize     = 16 // struct io_uring_recvmsg_out
	uringRequiredFeats = featSingleMmap | featNoDrop | featCQESkip
)

// uringParams is struct io_uring_params.
type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  struct {
		head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
		userAddr                                                        uint64
	}
	cqOff struct {
		head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
		userAddr                                                        uint64
	}
}

// sqe is struct io_uring_sqe (64 bytes).
type sqe struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	opFlags  uint32
	userData uint64
	bufGroup uint16
	_        uint16
	_        int32
	_        [2]uint64
}

// cqe is struct io_uring_cqe (16 bytes).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// uring is one io_uring: its rings mapped, its SQEs filled by one thread.
type uring struct {
	fd       int
	mem      []byte // the SQ and CQ rings (one mapping)
	sqesMem  []byte
	sqHead   *uint32
	sqTail   *uint32
	sqMask   uint32
	sqes     []sqe
	cqHead   *uint32
	cqTail   *uint32
	cqMask   uint32
	cqes     []cqe
	tail     uint32 // the SQ tail as filled, published by submit
	unsubmit uint32 // SQEs filled and not yet handed to the kernel
}

// errUringUnsupported wraps the reason the kernel cannot run a uring loop.
var errUringUnsupported = errors.New("io_uring unavailable")

// newUring sets up a ring of sqEntries SQEs and cqEntries CQEs, submitted to
// by the calling thread only (which must stay locked to its goroutine).
func newUring(sqEntries, cqEntries uint32) (*uring, error) {
	p := uringParams{cqEntries: cqEntries,
		flags: setupCQSize | setupSubmitAll | setupCoopTaskrun | setupSingleIssuer | setupDeferTaskrun}
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(sqEntries), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, fmt.Errorf("%w: io_uring_setup: %w", errUringUnsupported, e)
	}
	r := &uring{fd: int(fd)}
	if p.features&uringRequiredFeats != uringRequiredFeats {
		unix.Close(r.fd)
		return nil, fmt.Errorf("%w: kernel lacks features %#x", errUringUnsupported, uringRequiredFeats&^p.features)
	}
	if err := r.mmap(&p); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *uring) mmap(p *uringParams) error {
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(cqe{})))
	mem, err := unix.Mmap(r.fd, offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("mmap io_uring rings: %w", err)
	}
	r.mem = mem
	sqes, err := unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("mmap io_uring SQEs: %w", err)
	}
	r.sqesMem = sqes
	at := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead, r.sqTail, r.sqMask = at(p.sqOff.head), at(p.sqOff.tail), *at(p.sqOff.ringMask)
	r.cqHead, r.cqTail, r.cqMask = at(p.cqOff.head), at(p.cqOff.tail), *at(p.cqOff.ringMask)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&sqes[0])), p.sqEntries)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&mem[p.cqOff.cqes])), p.cqEntries)
	array := unsafe.Slice((*uint32)(unsafe.Pointer(&mem[p.sqOff.array])), p.sqEntries)
	for i := range array {
		array[i] = uint32(i) // SQE i at SQ slot i, for good
	}
	r.tail = *r.sqTail
	return nil
}

func (r *uring) close() {
	if r.sqesMem != nil {
		unix.Munmap(r.sqesMem)
	}
	if r.mem != nil {
		unix.Munmap(r.mem)
	}
	unix.Close(r.fd)
}

// sqeFree returns how many SQEs can be filled before the next submit.
func (r *uring) sqeFree() int {
	return len(r.sqes) - int(r.tail-atomic.LoadUint32(r.sqHead))
}

// next returns the next SQE, zeroed; the caller checked sqeFree.
func (r *uring) next() *sqe {
	s := &r.sqes[r.tail&r.sqMask]
	*s = sqe{}
	r.tail++
	r.unsubmit++
	return s
}

// enter hands the filled SQEs to the kernel (each is issued before it
// returns: the sends, MSG_DONTWAIT, complete or fail there) and, with wait,
// sleeps until at least one CQE is ready.
func (r *uring) enter(wait bool) error {
	if r.unsubmit == 0 && !wait {
		return nil
	}
	atomic.StoreUint32(r.sqTail, r.tail)
	var flags, minComplete uintptr
	if wait {
		flags, minComplete = enterGetEvents, 1
	}
	for {
		n, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.unsubmit), minComplete, flags, 0, 0)
		switch {
		case e == unix.EINTR: // nothing submitted
			continue
		case e != 0:
			return fmt.Errorf("io_uring_enter: %w", e)
		}
		r.unsubmit -= min(uint32(n), r.unsubmit)
		if r.unsubmit == 0 {
			return nil
		}
		// A short count: the kernel could not take more yet (no memory).
	}
}

// cqReady returns how many CQEs are waiting.
func (r *uring) cqReady() uint32 {
	return atomic.LoadUint32(r.cqTail) - *r.cqHead
}

// cqe returns the i-th waiting CQE (i < cqReady).
func (r *uring) cqe(i uint32) *cqe {
	return &r.cqes[(*r.cqHead+i)&r.cqMask]
}

// consume frees the first n waiting CQEs.
func (r *uring) consume(n uint32) {
	atomic.StoreUint32(r.cqHead, *r.cqHead+n)
}

// bufRing is one provided-buffer ring (IORING_REGISTER_PBUF_RING, Linux
// 5.19): n buffers of size bytes the kernel picks from for multishot
// receives of group gid, handed back by the loop once their datagram is
// answered.
type bufRing struct {
	gid   uint16
	size  int
	mask  uint16
	ring  []byte // n × struct io_uring_buf; the tail is the first's last 2 bytes
	bufs  []byte // n × size, outside the Go heap
	tail  uint16
	added uint16 // buffers handed back since the last publish
}

// newBufRing maps and registers n (a power of two) buffers of size bytes.
func (r *uring) newBufRing(gid uint16, n, size int) (*bufRing, error) {
	ring, err := unix.Mmap(-1, 0, n*16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mmap buffer ring: %w", err)
	}
	bufs, err := unix.Mmap(-1, 0, n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		unix.Munmap(ring)
		return nil, fmt.Errorf("mmap buffers: %w", err)
	}
	reg := struct {
		ringAddr    uint64
		ringEntries uint32
		bgid        uint16
		flags       uint16
		resv        [3]uint64
	}{ringAddr: uint64(uintptr(unsafe.Pointer(&ring[0]))), ringEntries: uint32(n), bgid: gid}
	if _, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0); e != 0 {
		unix.Munmap(ring)
		unix.Munmap(bufs)
		return nil, fmt.Errorf("%w: register buffer ring: %w", errUringUnsupported, e)
	}
	b := &bufRing{gid: gid, size: size, mask: uint16(n - 1), ring: ring, bufs: bufs}
	for i := 0; i < n; i++ {
		b.put(uint16(i))
	}
	b.publish()
	return b, nil
}

// buf returns buffer id's bytes.
func (b *bufRing) buf(id uint16) []byte {
	return b.bufs[int(id)*b.size : (int(id)+1)*b.size]
}

// put hands buffer id back (seen by the kernel at the next publish).
func (b *bufRing) put(id uint16) {
	e := b.ring[int((b.tail+b.added)&b.mask)*16:]
	*(*uint64)(unsafe.Pointer(&e[0])) = uint64(uintptr(unsafe.Pointer(&b.bufs[int(id)*b.size])))
	*(*uint32)(unsafe.Pointer(&e[8])) = uint32(b.size)
	*(*uint16)(unsafe.Pointer(&e[12])) = id
	b.added++
}

// publish makes the buffers put since the last publish the kernel's.
func (b *bufRing) publish() {
	if b.added == 0 {
		return
	}
	b.tail += b.added
	b.added = 0
	// The tail is the 16 bits after the first entry's buffer id: stored
	// with that id, as one aligned 32-bit word, in the machine's order.
	var w [4]byte
	copy(w[:2], b.ring[12:14])
	binary.NativeEndian.PutUint16(w[2:], b.tail)
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&b.ring[12])), binary.NativeEndian.Uint32(w[:]))
}

// URingAvailable reports why the uring layer cannot run here (nil: it
// can): a kernel before 6.1 or without a feature it needs, io_uring
// disabled (kernel.io_uring_disabled), or a seccomp filter refusing it.
// queryd check warns with it; the daemon falls back to the batch layer.
func URingAvailable() error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // the ring's one submitter, for its short life
		defer runtime.UnlockOSThread()
		r, err := newUring(8, 16)
		if err == nil {
			var b *bufRing
			if b, err = r.newBufRing(0, 16, 256); err == nil {
				b.unmap()
			}
			r.close()
		}
		done <- err
	}()
	return <-done
}

// unmap releases the buffer ring's memory (its ring already closed).
func (b *bufRing) unmap() {
	unix.Munmap(b.ring)
	unix.Munmap(b.bufs)
}

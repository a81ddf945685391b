//go:build linux

package responder

import (
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The batch layer's receive loops are the process's, not a server's: one
// loop per CPU, each an epoll set holding its share of every batch socket of
// every Server (and Sockets) in the process, woken by whichever are ready.
// A host of many servers used to run one blocked receive thread per socket
// (two per server on two CPUs): spread over 50 servers, each thread woke for
// a few datagrams and queryd paid twice the CPU per answer of the same load
// on one server (bench/README.md, "Host mode"). A loop now drains every
// ready socket before it sleeps again, so the batches grow with the load and
// the threads stay few. Each socket belongs to one loop, whose buffers it
// borrows while it is read; its session, sender, GSO flag and drop counter
// stay its own, and its replies leave from it. Idle, a loop sleeps in
// epoll_wait without a timeout: no wake-ups, whatever the number of sockets.

const (
	loopEvents = 128 // ready sockets taken per epoll_wait
	loopRounds = 4   // full batches read from one socket before the loop's others
	wakeSlot   = -1  // the epoll data of a loop's eventfd
)

// recvLoop is one receive loop of either kind: epoll (rloop) or io_uring
// (uloop, uloop_linux.go).
type recvLoop interface {
	// add registers s, whose largest request is maxReq bytes.
	add(s *rsock, maxReq int) error
	// remove has the loop stop reading s and close it (s.wg.Done then).
	remove(s *rsock)
}

// reactor is the process's receive loops of one kind.
type reactor struct {
	loops []recvLoop
	next  atomic.Uint32 // spreads the addresses' first sockets over the loops
}

var (
	reactorOnce sync.Once
	theReactor  *reactor
	reactorErr  error
)

// sharedReactor starts the receive loops on first use (one per CPU) and
// returns them; they run for the life of the process.
func sharedReactor() (*reactor, error) {
	reactorOnce.Do(func() {
		r := &reactor{}
		for i := 0; i < runtime.GOMAXPROCS(0); i++ {
			lp, err := newLoop()
			if err != nil {
				reactorErr = err
				return
			}
			r.loops = append(r.loops, lp)
			go lp.run()
		}
		theReactor = r
	})
	return theReactor, reactorErr
}

// rsock is one batch socket registered with a loop.
type rsock struct {
	fd      int
	slot    int
	first   bool // a proven sources' socket (steer_linux.go): read before the others
	l       *batchListener
	p       pipeline
	ss      *session
	back    Sender
	gso     *atomic.Bool
	ovfl    uint32 // the kernel's last drop count on this socket
	w       *batchWorker
	wg      *sync.WaitGroup // Done once the loop has closed the socket
	loop    recvLoop
	closing atomic.Bool

	// The uring loop's, used by its thread only.
	ug      *ugroup
	gen     uint32
	armed   bool   // its multishot receive is armed
	ended   bool   // its receive has ended for good: closed after the round
	round   uint64 // the loop's round it last began a batch in
	lastOOB []byte // the control data of its last datagram of the round
}

// slotTable is a receive loop's sockets by slot (the number the kernel
// hands back with each event), reusing freed slots.
type slotTable struct {
	slots []*rsock // nil: free
	free  []int
}

// put gives s a slot.
func (t *slotTable) put(s *rsock) {
	if n := len(t.free); n > 0 {
		s.slot = t.free[n-1]
		t.free = t.free[:n-1]
		t.slots[s.slot] = s
		return
	}
	s.slot = len(t.slots)
	t.slots = append(t.slots, s)
}

// drop frees slot.
func (t *slotTable) drop(slot int) {
	t.slots[slot] = nil
	t.free = append(t.free, slot)
}

// rloop is one receive loop: an epoll set, an eventfd that wakes it for
// removals, and the sockets it reads.
type rloop struct {
	epfd, wake int
	events     [loopEvents]unix.EpollEvent
	ready      [loopEvents]*rsock

	mu        sync.Mutex
	slotTable                      // the sockets by epoll data
	gone      []*rsock             // to remove and close
	workers   map[int]*batchWorker // buffers by largest request size
}

func newLoop() (*rloop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeSlot}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(wake)
		return nil, fmt.Errorf("epoll_ctl eventfd: %w", err)
	}
	return &rloop{epfd: epfd, wake: wake, workers: map[int]*batchWorker{}}, nil
}

// add registers s (level-triggered: a socket left with datagrams is
// reported again).
func (lp *rloop) add(s *rsock, maxReq int) error {
	lp.mu.Lock()
	s.w = lp.workers[maxReq]
	if s.w == nil {
		s.w = newBatchWorker(-1, maxReq)
		lp.workers[maxReq] = s.w
	}
	lp.put(s)
	lp.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(s.slot)}
	if err := unix.EpollCtl(lp.epfd, unix.EPOLL_CTL_ADD, s.fd, &ev); err != nil {
		lp.mu.Lock()
		lp.drop(s.slot)
		lp.mu.Unlock()
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// remove has the loop stop reading s and close it: at the end of the
// events it is handling, so that no socket is closed while it is read.
func (lp *rloop) remove(s *rsock) {
	s.closing.Store(true)
	lp.mu.Lock()
	lp.gone = append(lp.gone, s)
	lp.mu.Unlock()
	one := [8]byte{1}
	unix.Write(lp.wake, one[:])
}

func (lp *rloop) run() {
	runtime.LockOSThread() // blocks in epoll_wait and recvmmsg outside the netpoller
	for {
		n, err := unix.EpollWait(lp.epfd, lp.events[:], -1)
		if err != nil {
			continue // EINTR
		}
		woken := false
		lp.mu.Lock()
		for i := 0; i < n; i++ {
			if slot := int(lp.events[i].Fd); slot == wakeSlot {
				woken, lp.ready[i] = true, nil
			} else {
				lp.ready[i] = lp.slots[slot]
			}
		}
		lp.mu.Unlock()
		lp.serveReady(n)
		if woken {
			lp.reap()
		}
	}
}

// serveReady reads the n ready sockets: the proven sources' first, so that
// their datagrams never wait behind a round of a flooded socket's.
func (lp *rloop) serveReady(n int) {
	for _, first := range [2]bool{true, false} {
		for i := 0; i < n; i++ {
			if s := lp.ready[i]; s != nil && s.first == first && !s.closing.Load() {
				s.w.serve(s, loopRounds)
			}
		}
	}
	clear(lp.ready[:n])
}

// reap removes and closes the sockets handed back by remove.
func (lp *rloop) reap() {
	var buf [8]byte
	unix.Read(lp.wake, buf[:])
	lp.mu.Lock()
	gone := lp.gone
	lp.gone = nil
	for _, s := range gone {
		unix.EpollCtl(lp.epfd, unix.EPOLL_CTL_DEL, s.fd, nil)
		lp.drop(s.slot)
	}
	lp.mu.Unlock()
	for _, s := range gone {
		unix.Close(s.fd)
		s.wg.Done()
	}
}

var (
	uringOnce sync.Once
	theURing  *reactor
	uringErr  error
	// uringRefused, when set (by tests), is the error io_uring fails with.
	uringRefused error
)

// sharedURing starts the uring receive loops on first use (one per CPU,
// each ring set up on the thread that runs it) and returns them.
func sharedURing(log *slog.Logger) (*reactor, error) {
	uringOnce.Do(func() {
		r := &reactor{}
		for i := 0; i < runtime.GOMAXPROCS(0); i++ {
			lp, err := startULoop(log)
			if err != nil {
				uringErr = err
				return
			}
			r.loops = append(r.loops, lp)
		}
		theURing = r
		log.Info("socket layer uring: io_uring receive loops started", "loops", len(r.loops))
	})
	return theURing, uringErr
}

// startULoop runs one uring loop on a thread of its own.
func startULoop(log *slog.Logger) (*uloop, error) {
	type result struct {
		lp  *uloop
		err error
	}
	ready := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // the ring's one submitter (IORING_SETUP_SINGLE_ISSUER)
		lp, err := newULoop(log)
		ready <- result{lp, err}
		if err != nil {
			runtime.UnlockOSThread()
			return
		}
		lp.run()
	}()
	res := <-ready
	return res.lp, res.err
}

// loopsFor returns the receive loops for socket layer layer: the uring
// loops, or the epoll loops where the kernel (or a seccomp filter) refuses
// io_uring, said in the log.
func loopsFor(layer SocketLayer, log *slog.Logger) (*reactor, error) {
	if layer == SocketUring {
		r, err := sharedURing(log)
		if uringRefused != nil {
			err = uringRefused
		}
		if err == nil {
			return r, nil
		}
		log.Warn("socket layer uring: io_uring unavailable, using the batch layer's receive loops", "err", err)
	}
	return sharedReactor()
}

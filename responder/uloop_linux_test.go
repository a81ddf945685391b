//go:build linux

package responder

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// requireURing skips t where this kernel (or a seccomp filter) refuses
// what the uring layer needs.
func requireURing(t *testing.T) {
	t.Helper()
	if _, err := sharedURing(slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Skipf("no uring layer here: %v", err)
	}
}

// startSockets runs the socket layer of cfg answering with h, closed when
// t ends.
func startSockets(t *testing.T, cfg SocketConfig, h Handler) *Sockets {
	t.Helper()
	s, err := NewSockets(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Close() })
	return s
}

// startFixed runs a one-socket server of layer answering "reply" on
// 127.0.0.1, logging to log.
func startFixed(t *testing.T, layer SocketLayer, log *slog.Logger) *Sockets {
	t.Helper()
	return startSockets(t, SocketConfig{Listen: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, Socket: layer, Workers: 1,
		Logger: log}, fixedHandler{reply: []byte("reply")})
}

// connected returns a client socket connected to s's address (its reads
// and writes allocate nothing).
func connected(t *testing.T, s *Sockets) int {
	t.Helper()
	c, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(c) })
	tv := unix.Timeval{Sec: 2}
	if err := unix.SetsockoptTimeval(c, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	if err := unix.Connect(c, &unix.SockaddrInet4{Port: int(s.Addrs()[0].Port()), Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// With socket = "uring" and io_uring here, the address's socket is read by
// a uring loop, and answers.
func TestURingInUse(t *testing.T) {
	requireURing(t)
	s := startFixed(t, SocketUring, slog.New(slog.NewTextHandler(io.Discard, nil)))
	l := s.set.listeners[0].(*batchListener)
	if _, ok := l.socks[0].loop.(*uloop); !ok {
		t.Fatalf("socket read by a %T, want a uring loop", l.socks[0].loop)
	}
	c := connected(t, s)
	buf := make([]byte, 64)
	if _, err := unix.Write(c, []byte("query")); err != nil {
		t.Fatal(err)
	}
	if n, err := readRetry(c, buf); err != nil || string(buf[:n]) != "reply" {
		t.Fatalf("read %q, %v", buf[:max(n, 0)], err)
	}
}

// Where io_uring is refused, socket = "uring" says so in the log and
// serves through the batch layer's loops.
func TestURingRefusedFallsBack(t *testing.T) {
	uringRefused = errors.New("refused for the test")
	t.Cleanup(func() { uringRefused = nil })
	var logged bytes.Buffer
	s := startFixed(t, SocketUring, slog.New(slog.NewTextHandler(&logged, nil)))
	l := s.set.listeners[0].(*batchListener)
	if _, ok := l.socks[0].loop.(*rloop); !ok {
		t.Fatalf("socket read by a %T, want the batch layer's loop", l.socks[0].loop)
	}
	if !bytes.Contains(logged.Bytes(), []byte("io_uring unavailable")) || !bytes.Contains(logged.Bytes(), []byte("refused for the test")) {
		t.Fatalf("log %q: no word of the fallback", logged.String())
	}
	c := connected(t, s)
	buf := make([]byte, 64)
	unix.Write(c, []byte("query"))
	if n, err := readRetry(c, buf); err != nil || string(buf[:n]) != "reply" {
		t.Fatalf("read %q, %v", buf[:max(n, 0)], err)
	}
}

// The uring loop answers datagram after datagram without allocating: the
// whole process allocates (almost) nothing over 500 exchanges.
func TestURingAnswerNoAlloc(t *testing.T) {
	requireURing(t)
	s := startFixed(t, SocketUring, slog.New(slog.NewTextHandler(io.Discard, nil)))
	c := connected(t, s)
	req, buf := []byte("query"), make([]byte, 64)
	exchange := func() {
		if _, err := unix.Write(c, req); err != nil {
			t.Fatal(err)
		}
		if _, err := readRetry(c, buf); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 50; i++ {
		exchange()
	}
	const runs = 500
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < runs; i++ {
		exchange()
	}
	runtime.ReadMemStats(&after)
	if n := after.Mallocs - before.Mallocs; n > runs/50 {
		t.Fatalf("%d allocations over %d exchanges", n, runs)
	}
}

// A full round: more datagrams than one round answers and more replies
// than one send batch holds, from many sockets, all answered.
func TestURingManySocketsFullRounds(t *testing.T) {
	requireURing(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const servers, each = 8, 100
	var cs []int
	for i := 0; i < servers; i++ {
		s := startFixed(t, SocketUring, log)
		c := connected(t, s)
		if err := unix.SetsockoptInt(c, unix.SOL_SOCKET, unix.SO_RCVBUF, 1<<20); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	for _, c := range cs { // 800 queued at once: rounds of uringRound, send batches of sendCap
		for j := 0; j < each; j++ {
			if _, err := unix.Write(c, []byte("query")); err != nil {
				t.Fatal(err)
			}
		}
	}
	buf := make([]byte, 64)
	deadline := time.Now().Add(5 * time.Second)
	for i, c := range cs {
		for j := 0; j < each; j++ {
			if n, err := readRetry(c, buf); err != nil || string(buf[:n]) != "reply" {
				t.Fatalf("server %d, reply %d: %q, %v", i, j, buf[:max(n, 0)], err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("too slow")
		}
	}
}

func TestGroupBuffers(t *testing.T) {
	for _, tc := range []struct{ size, want int }{{256, 1024}, {2240, 1024}, {4160, 512}, {8256, 256}, {65728, 32}, {1 << 20, 16}} {
		if got := groupBuffers(tc.size); got != tc.want {
			t.Errorf("groupBuffers(%d) = %d, want %d", tc.size, got, tc.want)
		}
	}
}

// readRetry is unix.Read on a blocking socket, asked again when a signal
// (the Go runtime's preemption) interrupts it.
func readRetry(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Read(fd, buf)
		if err != unix.EINTR {
			return n, err
		}
	}
}

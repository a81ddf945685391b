//go:build linux

package responder

import (
	"io"
	"log/slog"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/dgram"
)

// fixedHandler answers every datagram with the same reply.
type fixedHandler struct{ reply []byte }

func (fixedHandler) Name() string       { return "fixed" }
func (fixedHandler) Claims([]byte) bool { return true }
func (h fixedHandler) Answer(_ []byte, _ netip.AddrPort, _ []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	return append(out, h.reply), dgram.Answered
}

// A receive loop's read of a ready socket (recvmmsg, the handler, sendmmsg)
// allocates nothing.
func TestLoopAnswerNoAlloc(t *testing.T) {
	s, err := NewSockets(SocketConfig{
		Listen: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, Socket: SocketBatch, Workers: 1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, fixedHandler{reply: []byte("reply")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	defer s.Close() // not started: closes the socket itself
	l := s.set.listeners[0].(*batchListener)
	rs := &rsock{fd: l.fds[0], l: l, p: s, ss: s.newSession(), back: l.sender(), gso: &l.gso, w: newBatchWorker(-1, 2048)}
	c, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(c)
	if err := unix.Bind(c, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	to := &unix.SockaddrInet4{Port: int(l.addr.Port()), Addr: [4]byte{127, 0, 0, 1}}
	const runs = 50
	for i := 0; i < (runs+1)*3; i++ {
		if err := unix.Sendto(c, []byte("query"), 0, to); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(runs, func() { rs.w.serve(rs, 1) })
	if allocs != 0 {
		t.Fatalf("%v allocations per socket read, want 0", allocs)
	}
	buf := make([]byte, 64)
	if n, _, err := unix.Recvfrom(c, buf, unix.MSG_DONTWAIT); err != nil || string(buf[:n]) != "reply" {
		t.Fatalf("client got %q, %v; want the reply", buf[:n], err)
	}
}

//go:build linux

package responder

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/wire"
)

// partsHandler answers every datagram starting with 'P' with its parts.
type partsHandler struct{ parts [][]byte }

func (h *partsHandler) Name() string         { return "parts" }
func (h *partsHandler) Claims(p []byte) bool { return len(p) > 0 && p[0] == 'P' }
func (h *partsHandler) Serve(_ []byte, _ netip.AddrPort, _ []byte, out [][]byte) ([][]byte, wire.Outcome) {
	return append(out, h.parts...), wire.Answered
}

// makeParts makes datagrams of the given sizes, each filled with its own
// byte pattern so that a mix-up shows.
func makeParts(sizes ...int) [][]byte {
	out := make([][]byte, len(sizes))
	for j, n := range sizes {
		out[j] = make([]byte, n)
		for k := range out[j] {
			out[j][k] = byte(j*7 + k)
		}
	}
	return out
}

// startParts runs a one-socket batch server answering with parts.
func startParts(t *testing.T, parts [][]byte, disableGSO bool) (*Server, *net.UDPConn) {
	t.Helper()
	s, err := New(Config{Listen: []string{"127.0.0.1:0"}, Socket: SocketBatch, Workers: 1, Bare: true,
		DisableGSO: disableGSO, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, &partsHandler{parts: parts})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Close() })
	c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(s.Addrs()[0]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c
}

// askParts sends one query and checks that exactly want comes back, in order.
func askParts(t *testing.T, c *net.UDPConn, want [][]byte) {
	t.Helper()
	if _, err := c.Write([]byte("P")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 70000)
	for j, w := range want {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("datagram %d of %d: %v", j, len(want), err)
		}
		if !bytes.Equal(buf[:n], w) {
			t.Fatalf("datagram %d: got %d bytes %x…, want %d bytes %x…", j, n, buf[:min(n, 8)], len(w), w[:min(len(w), 8)])
		}
	}
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := c.Read(buf); err == nil {
		t.Fatalf("an extra datagram of %d bytes", n)
	}
}

// gsoCounts sums the server's GSO sends and refusals.
func gsoCounts(s *Server) (sends, refused uint64) {
	s.metrics.mu.Lock()
	defer s.metrics.mu.Unlock()
	for _, w := range s.metrics.workers {
		sends += w.gsoSends.Load()
		refused += w.gsoRefused.Load()
	}
	return sends, refused
}

// TestGSOAnswerArrivesAsItsDatagrams: an answer of several datagrams reaches
// the client as exactly those datagrams, in order, whether it could leave as
// one GSO send (equal sizes, a last one no larger) or not.
func TestGSOAnswerArrivesAsItsDatagrams(t *testing.T) {
	many := make([]int, maxGSOSegs)
	tooMany := make([]int, maxGSOSegs+1)
	for i := range many {
		many[i] = 900
	}
	for i := range tooMany {
		tooMany[i] = 900
	}
	cases := []struct {
		sizes []int
		gso   bool
	}{
		{[]int{1000, 1000, 500}, true},
		{[]int{1200, 1200}, true},
		{[]int{939, 939, 939, 939}, true},
		{[]int{1400, 1}, true},
		{many, true},
		{[]int{100}, false},            // one datagram: nothing to segment
		{[]int{500, 1000}, false},      // the last larger
		{[]int{1000, 900, 900}, false}, // unequal before the last
		{tooMany, false},               // more segments than one send takes
		{[]int{40000, 40000}, false},   // more than one packet's payload
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d×%d..%d", len(tc.sizes), tc.sizes[0], tc.sizes[len(tc.sizes)-1]), func(t *testing.T) {
			parts := makeParts(tc.sizes...)
			s, c := startParts(t, parts, false)
			if !s.listeners[0].(*batchListener).gso.Load() {
				t.Skip("this kernel has no UDP_SEGMENT")
			}
			askParts(t, c, parts)
			askParts(t, c, parts)
			sends, refused := gsoCounts(s)
			want := uint64(0)
			if tc.gso {
				want = 2
			}
			if sends != want || refused != 0 {
				t.Fatalf("GSO sends %d, refused %d; want %d, 0", sends, refused, want)
			}
		})
	}
}

// TestGSODisabled: with DisableGSO every datagram leaves on its own.
func TestGSODisabled(t *testing.T) {
	parts := makeParts(1000, 1000, 500)
	s, c := startParts(t, parts, true)
	askParts(t, c, parts)
	if sends, _ := gsoCounts(s); sends != 0 {
		t.Fatalf("GSO sends %d with DisableGSO", sends)
	}
}

// TestGSORefusedFallsBack: when the kernel refuses a GSO send (here because
// the socket turned UDP checksums off, SO_NO_CHECK, which GSO needs), the
// answer still arrives whole, datagram by datagram, the refusal is counted,
// and GSO is off for that address from then on.
func TestGSORefusedFallsBack(t *testing.T) {
	parts := makeParts(1000, 1000, 500)
	s, c := startParts(t, parts, false)
	l := s.listeners[0].(*batchListener)
	if !l.gso.Load() {
		t.Skip("this kernel has no UDP_SEGMENT")
	}
	for _, fd := range l.fds {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_NO_CHECK, 1); err != nil {
			t.Skipf("SO_NO_CHECK: %v", err)
		}
	}
	askParts(t, c, parts)
	if sends, refused := gsoCounts(s); sends != 1 || refused != 1 {
		t.Fatalf("GSO sends %d, refused %d; want 1, 1", sends, refused)
	}
	if l.gso.Load() {
		t.Fatal("GSO still on after a refusal")
	}
	askParts(t, c, parts)
	if sends, refused := gsoCounts(s); sends != 1 || refused != 1 {
		t.Fatalf("after the refusal: GSO sends %d, refused %d; want 1, 1", sends, refused)
	}
}

func TestGSOSegment(t *testing.T) {
	cases := []struct {
		sizes []int
		want  int
	}{
		{nil, 0},
		{[]int{10}, 0},
		{[]int{10, 10}, 10},
		{[]int{10, 3}, 10},
		{[]int{10, 11}, 0},
		{[]int{10, 0}, 0},
		{[]int{10, 9, 9}, 0},
		{[]int{1200, 1200, 1200, 1}, 1200},
		{[]int{32500, 32500}, 32500},
		{[]int{32501, 32500}, 0},
	}
	for _, tc := range cases {
		if got := gsoSegment(makeParts(tc.sizes...)); got != tc.want {
			t.Errorf("gsoSegment(%v) = %d, want %d", tc.sizes, got, tc.want)
		}
	}
}

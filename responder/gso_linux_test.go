//go:build linux

package responder

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/dgram"
)

// partsHandler answers every datagram starting with 'P' with its parts.
type partsHandler struct{ parts [][]byte }

var _ Handler = (*partsHandler)(nil)

func (h *partsHandler) Name() string         { return "parts" }
func (h *partsHandler) Claims(p []byte) bool { return len(p) > 0 && p[0] == 'P' }
func (h *partsHandler) Answer(_ []byte, _ netip.AddrPort, _ []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	return append(out, h.parts...), dgram.Answered
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

// startParts runs a one-socket batch server on 127.0.0.1 answering with parts.
func startParts(t *testing.T, parts [][]byte, disableGSO bool) (*Sockets, *net.UDPConn) {
	t.Helper()
	return startPartsOn(t, "127.0.0.1:0", parts, disableGSO)
}

// partsLayer is the socket layer startParts runs on (TestGSOURing sets it).
var partsLayer = SocketBatch

// startPartsOn runs a one-socket server of partsLayer on addr answering
// with parts.
func startPartsOn(t *testing.T, addr string, parts [][]byte, disableGSO bool) (*Sockets, *net.UDPConn) {
	t.Helper()
	s := startSockets(t, SocketConfig{Listen: []netip.AddrPort{netip.MustParseAddrPort(addr)}, Socket: partsLayer, Workers: 1,
		DisableGSO: disableGSO, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, &partsHandler{parts: parts})
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(s.Addrs()[0]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadBuffer(4 << 20) // room for the longest answer at once
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
func gsoCounts(s *Sockets) (sends, refused uint64) {
	s.metrics.mu.Lock()
	defer s.metrics.mu.Unlock()
	for _, w := range s.metrics.workers {
		sends += w.gsoSends.Load()
		refused += w.gsoRefused.Load()
	}
	return sends, refused
}

// TestGSOAnswerArrivesAsItsDatagrams: an answer of several datagrams reaches
// the client as exactly those datagrams, in order, whether its datagrams
// could leave in GSO sends (runs of equal sizes, each run's last no larger)
// or not.
func TestGSOAnswerArrivesAsItsDatagrams(t *testing.T) {
	same := func(n, size int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = size
		}
		return out
	}
	cases := []struct {
		name  string
		sizes []int
		gso   uint64 // GSO sends per answer
	}{
		{"split A2S", []int{1248, 1248, 500}, 1},
		{"two equal", []int{1200, 1200}, 1},
		{"SAGL parts", []int{1200, 1200, 1200, 156}, 1},
		{"tiny last", []int{1400, 1}, 1},
		{"most segments", same(maxGSOSegs, 900), 1},
		{"one datagram", []int{100}, 0},
		{"last larger", []int{500, 1000}, 0},
		{"short second", []int{1000, 900, 900}, 1},                      // [1000 900] then 900 alone
		{"two runs, two sizes", []int{1000, 500, 800, 800}, 2},          // each GSO message its own segment size
		{"more than one send's segments", same(2*maxGSOSegs+2, 100), 3}, // 64, 64, 2
		{"more than one packet", []int{40000, 40000}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parts := makeParts(tc.sizes...)
			s, c := startParts(t, parts, false)
			if !s.set.listeners[0].(*batchListener).gso.Load() {
				t.Skip("this kernel has no UDP_SEGMENT")
			}
			askParts(t, c, parts)
			askParts(t, c, parts)
			sends, refused := gsoCounts(s)
			if sends != 2*tc.gso || refused != 0 {
				t.Fatalf("GSO sends %d, refused %d; want %d, 0", sends, refused, 2*tc.gso)
			}
		})
	}
}

// TestGSOIPv6: the same over IPv6, where the reply's control data holds
// the IPV6_PKTINFO and the UDP_SEGMENT messages together.
func TestGSOIPv6(t *testing.T) {
	if c, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback}); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		c.Close()
	}
	parts := makeParts(1200, 1200, 1200, 156)
	s, c := startPartsOn(t, "[::1]:0", parts, false)
	if !s.set.listeners[0].(*batchListener).gso.Load() {
		t.Skip("this kernel has no UDP_SEGMENT")
	}
	askParts(t, c, parts)
	if sends, refused := gsoCounts(s); sends != 1 || refused != 0 {
		t.Fatalf("GSO sends %d, refused %d; want 1, 0", sends, refused)
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
	l := s.set.listeners[0].(*batchListener)
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

// TestGSOURing: the same answers, GSO sends and refusals on the uring
// layer, whose failed GSO sends are resent datagram by datagram from their
// completions.
func TestGSOURing(t *testing.T) {
	requireURing(t)
	partsLayer = SocketUring
	t.Cleanup(func() { partsLayer = SocketBatch })
	t.Run("datagrams", TestGSOAnswerArrivesAsItsDatagrams)
	t.Run("ipv6", TestGSOIPv6)
	t.Run("disabled", TestGSODisabled)
	t.Run("refused", TestGSORefusedFallsBack)
}

func TestGSORun(t *testing.T) {
	cases := []struct {
		sizes  []int
		n, seg int
	}{
		{nil, 0, 0},
		{[]int{10}, 0, 0},
		{[]int{10, 10}, 2, 10},
		{[]int{10, 3}, 2, 10},
		{[]int{10, 3, 3}, 2, 10},
		{[]int{10, 11}, 0, 0},
		{[]int{10, 0}, 0, 0},
		{[]int{0, 0}, 0, 0},
		{[]int{10, 10, 9, 9}, 3, 10},
		{[]int{1200, 1200, 1200, 1}, 4, 1200},
		{[]int{32500, 32500}, 2, 32500},
		{[]int{32500, 32500, 32500}, 2, 32500},
		{[]int{32501, 32500}, 0, 0},
	}
	for _, tc := range cases {
		if n, seg := gsoRun(makeParts(tc.sizes...)); n != tc.n || seg != tc.seg {
			t.Errorf("gsoRun(%v) = %d, %d; want %d, %d", tc.sizes, n, seg, tc.n, tc.seg)
		}
	}
	long := make([]int, maxGSOSegs+5)
	for i := range long {
		long[i] = 100
	}
	if n, _ := gsoRun(makeParts(long...)); n != maxGSOSegs {
		t.Errorf("gsoRun of %d equal datagrams = %d, want %d", len(long), n, maxGSOSegs)
	}
}

// TestGSOSendErrorIsNotARefusal: a GSO send that fails for a reason of its
// own destination (port 0, which the kernel refuses with EINVAL like an
// unsegmentable send) fails datagram by datagram too: it counts as send
// errors and leaves GSO on, so a spoofed source cannot turn GSO off.
func TestGSOSendErrorIsNotARefusal(t *testing.T) {
	parts := makeParts(1000, 1000, 500)
	s, _ := startParts(t, parts, false)
	l := s.set.listeners[0].(*batchListener)
	if !l.gso.Load() {
		t.Skip("this kernel has no UDP_SEGMENT")
	}
	w := newBatchWorker(l.fds[0], 2048)
	w.gso = &l.gso
	sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&w.names[0]))
	sa.Family = unix.AF_INET
	sa.Addr = [4]byte{127, 0, 0, 1} // port 0
	w.msgs[0].hdr.Namelen = unix.SizeofSockaddrInet4
	ss := s.newSession()
	n, seg := gsoRun(parts)
	if n != len(parts) || seg == 0 {
		t.Fatalf("gsoRun: %d of %d, segment %d", n, len(parts), seg)
	}
	w.queueAnswer(w, ss, parts, (*byte)(unsafe.Pointer(&w.names[0])), unix.SizeofSockaddrInet4, nil)
	w.flush(ss)
	if !l.gso.Load() || ss.stats.gsoRefused.Load() != 0 || ss.stats.sendErr.Load() != 3 {
		t.Fatalf("gso on %v, refused %d, send errors %d; want true, 0, 3",
			l.gso.Load(), ss.stats.gsoRefused.Load(), ss.stats.sendErr.Load())
	}
}

// TestReplyControlNoAlloc: the control data of a GSO reply (IPV6_PKTINFO,
// the largest, and UDP_SEGMENT) is built within its 64-byte slot.
func TestReplyControlNoAlloc(t *testing.T) {
	oob := controlFrom(nil, netip.MustParseAddr("2001:db8::1")) // the same layout as a received IPV6_PKTINFO
	slot := make([]byte, 0, replyCtrlSz)
	var rc []byte
	allocs := testing.AllocsPerRun(100, func() {
		rc = appendSegment(replyControl(slot[:0], oob), 1200)
	})
	if allocs != 0 || len(rc) != replyCtrlSz || &rc[0] != &slot[:1][0] {
		t.Fatalf("%v allocations, %d bytes (want 0 and %d, in the slot)", allocs, len(rc), replyCtrlSz)
	}
}

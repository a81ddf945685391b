package hostile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/internal/netnstest"
)

// rawSender sends UDP datagrams with any IPv4 source address through a raw
// socket (IPPROTO_RAW implies IP_HDRINCL: the test writes the IP header). It
// needs root (CAP_NET_RAW) and only ever sends between loopback addresses
// (newRawSender), or between addresses of the XDP test network from inside
// its client namespace (newNetRawSender).
type rawSender struct {
	fd   int
	dst  netip.AddrPort
	sa   unix.SockaddrInet4
	pkt  []byte
	ok   func(netip.Addr) bool // the addresses it may send from and to
	what string                // what ok allows, for errors
}

// newRawSender opens the raw socket; dst must be a loopback address.
func newRawSender(dst netip.AddrPort) (*rawSender, error) {
	return openRawSender(dst, netip.Addr.IsLoopback, "127.0.0.0/8")
}

// newNetRawSender opens the raw socket in the calling thread's network
// namespace (netnstest.Do); dst and every source must be addresses of the
// XDP test network.
func newNetRawSender(dst netip.AddrPort) (*rawSender, error) {
	return openRawSender(dst, netnstest.Contains, "the XDP test network")
}

func openRawSender(dst netip.AddrPort, ok func(netip.Addr) bool, what string) (*rawSender, error) {
	if !dst.Addr().Is4() || !ok(dst.Addr()) {
		return nil, fmt.Errorf("raw sender: %s is not an IPv4 address in %s", dst, what)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW)
	if err != nil {
		return nil, fmt.Errorf("raw socket: %w", err)
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4<<20)
	return &rawSender{fd: fd, dst: dst, sa: unix.SockaddrInet4{Addr: dst.Addr().As4()}, pkt: make([]byte, 0, 1600), ok: ok, what: what}, nil
}

// Send sends payload from src to the destination. The kernel fills in the
// IP checksum, total length and id; the UDP checksum is 0 (none, allowed
// over IPv4).
func (r *rawSender) Send(src netip.AddrPort, payload []byte) error {
	if !src.Addr().Is4() || !r.ok(src.Addr()) {
		return fmt.Errorf("raw sender: source %s is not in %s", src, r.what)
	}
	p := r.pkt[:28]
	clear(p)
	p[0] = 0x45 // IPv4, 5 words of header
	p[8] = 64   // TTL
	p[9] = unix.IPPROTO_UDP
	s4, d4 := src.Addr().As4(), r.dst.Addr().As4()
	copy(p[12:16], s4[:])
	copy(p[16:20], d4[:])
	binary.BigEndian.PutUint16(p[20:], src.Port())
	binary.BigEndian.PutUint16(p[22:], r.dst.Port())
	binary.BigEndian.PutUint16(p[24:], uint16(8+len(payload)))
	p = append(p, payload...)
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	for tries := 0; ; tries++ {
		err := unix.Sendto(r.fd, p, 0, &r.sa)
		if errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EAGAIN) {
			if tries < 100 {
				time.Sleep(100 * time.Microsecond)
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("raw send from %s: %w", src, err)
		}
		return nil
	}
}

// Close closes the raw socket.
func (r *rawSender) Close() error { return unix.Close(r.fd) }

// rawSupported reports why raw spoofed sending cannot work here ("" when it can).
func rawSupported() string {
	if testing.Short() {
		return "spoofed sources (floods, namespaces): -short"
	}
	if unix.Geteuid() != 0 {
		return "needs root (a raw socket to spoof 127.x.y.z sources); run the suite as root, as .ci/run does"
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_RAW)
	if err != nil {
		return fmt.Sprintf("cannot open a raw socket: %v", err)
	}
	unix.Close(fd)
	return ""
}

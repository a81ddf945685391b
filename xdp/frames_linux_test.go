//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// frame is an Ethernet frame carrying one UDP datagram, with the header
// faults the strictness tests need. The zero faults make a well-formed
// frame with correct checksums.
type frame struct {
	dstMAC, srcMAC net.HardwareAddr
	src, dst       netip.Addr // both IPv4 or both IPv6 (an IPv4-mapped source makes an IPv6 frame)
	payload        []byte
	vlan           uint16 // an 802.1Q tag in band (0: none)
	totLenDelta    int    // IPv4 total length off by this
	badIPCheck     bool   // IPv4 header checksum wrong
	version6       uint8  // IPv6 version nibble (0: 6)
	plenDelta      int    // IPv6 payload length off by this
	zeroUDPCheck   bool   // UDP checksum 0 (IPv6: forbidden)
}

// bytes builds the frame.
func (f frame) bytes() []byte {
	v6 := f.dst.Is6()
	b := append([]byte{}, f.dstMAC...)
	b = append(b, f.srcMAC...)
	if f.vlan != 0 {
		b = binary.BigEndian.AppendUint16(b, 0x8100)
		b = binary.BigEndian.AppendUint16(b, f.vlan)
	}
	udp := make([]byte, 8, 8+len(f.payload))
	binary.BigEndian.PutUint16(udp[0:], 40000)
	binary.BigEndian.PutUint16(udp[2:], testPort)
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(f.payload)))
	udp = append(udp, f.payload...)
	var pseudo uint32
	s16, d16 := f.src.As16(), f.dst.As16()
	if v6 {
		for i := 0; i < 16; i += 2 {
			pseudo += uint32(binary.BigEndian.Uint16(s16[i:])) + uint32(binary.BigEndian.Uint16(d16[i:]))
		}
	} else {
		for i := 12; i < 16; i += 2 {
			pseudo += uint32(binary.BigEndian.Uint16(s16[i:])) + uint32(binary.BigEndian.Uint16(d16[i:]))
		}
	}
	pseudo += unix.IPPROTO_UDP + uint32(len(udp))
	if !f.zeroUDPCheck {
		c := ^fold16(pseudo + sum16(udp))
		if c == 0 {
			c = 0xffff
		}
		binary.BigEndian.PutUint16(udp[6:], c)
	}
	if v6 {
		b = binary.BigEndian.AppendUint16(b, 0x86DD)
		ver := f.version6
		if ver == 0 {
			ver = 6
		}
		ip := make([]byte, 40)
		ip[0] = ver << 4
		binary.BigEndian.PutUint16(ip[4:], uint16(len(udp)+f.plenDelta))
		ip[6] = unix.IPPROTO_UDP
		ip[7] = 64
		copy(ip[8:], s16[:])
		copy(ip[24:], d16[:])
		return append(append(b, ip...), udp...)
	}
	b = binary.BigEndian.AppendUint16(b, 0x0800)
	ip := make([]byte, 20)
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+len(udp)+f.totLenDelta))
	ip[8] = 64
	ip[9] = unix.IPPROTO_UDP
	copy(ip[12:], s16[12:])
	copy(ip[16:], d16[12:])
	c := ^fold16(sum16(ip))
	if f.badIPCheck {
		c ^= 0x5555
	}
	binary.BigEndian.PutUint16(ip[10:], c)
	return append(append(b, ip...), udp...)
}

// fold16 folds a ones' complement sum to 16 bits.
func fold16(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

// rawWire is a packet socket on the client's end of the veth: it sends raw
// frames to the server and counts the UDP datagrams from port testPort
// that arrive (the program's XDP_TX and the socket path's alike).
type rawWire struct {
	fd      int
	ifindex int
	n       atomic.Int64
	stop    atomic.Bool
	wg      sync.WaitGroup
}

func (fx *fixture) openWire(t *testing.T) *rawWire {
	t.Helper()
	w := &rawWire{}
	err := inNS(fx.net.cliNS, func() error {
		ifc, err := net.InterfaceByName(fx.net.cliIf)
		if err != nil {
			return err
		}
		w.ifindex = ifc.Index
		w.fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		tv := unix.NsecToTimeval(int64(20 * time.Millisecond))
		unix.SetsockoptTimeval(w.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		return unix.Bind(w.fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifc.Index})
	})
	if err != nil {
		t.Fatal(err)
	}
	w.wg.Add(1)
	go w.read()
	t.Cleanup(func() {
		w.stop.Store(true)
		w.wg.Wait()
		unix.Close(w.fd)
	})
	return w
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func (w *rawWire) read() {
	defer w.wg.Done()
	buf := make([]byte, 4096)
	for !w.stop.Load() {
		n, from, err := unix.Recvfrom(w.fd, buf, 0)
		if err != nil {
			continue
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		if fromPort(buf[:n]) == testPort {
			w.n.Add(1)
		}
	}
}

// fromPort is the UDP source port of an untagged IPv4 or IPv6 frame, or 0.
func fromPort(b []byte) uint16 {
	if len(b) < 14 {
		return 0
	}
	switch binary.BigEndian.Uint16(b[12:]) {
	case 0x0800:
		if len(b) >= 14+20+8 && b[14+9] == unix.IPPROTO_UDP {
			return binary.BigEndian.Uint16(b[14+int(b[14]&0xf)*4:])
		}
	case 0x86DD:
		if len(b) >= 14+40+8 && b[14+6] == unix.IPPROTO_UDP {
			return binary.BigEndian.Uint16(b[14+40:])
		}
	}
	return 0
}

// send writes one frame onto the veth.
func (w *rawWire) send(t *testing.T, b []byte) {
	t.Helper()
	sa := &unix.SockaddrLinklayer{Ifindex: w.ifindex, Halen: 6}
	copy(sa.Addr[:], b[:6])
	if err := unix.Sendto(w.fd, b, 0, sa); err != nil {
		t.Fatalf("send a raw frame: %v", err)
	}
}

// replies sends b and counts what comes back from port testPort within wait.
func (w *rawWire) replies(t *testing.T, b []byte, wait time.Duration) int64 {
	t.Helper()
	time.Sleep(30 * time.Millisecond) // late replies of an earlier frame
	before := w.n.Load()
	w.send(t, b)
	time.Sleep(wait)
	return w.n.Load() - before
}

// macOf is the MAC of interface ifname in namespace ns.
func macOf(t *testing.T, ns, ifname string) net.HardwareAddr {
	t.Helper()
	var mac net.HardwareAddr
	err := inNS(ns, func() error {
		ifc, err := net.InterfaceByName(ifname)
		if err == nil {
			mac = ifc.HardwareAddr
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return mac
}

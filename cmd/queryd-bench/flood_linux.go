//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/xdp"
)

// floodNet is the only range the flood generator sends to or from: the
// benchmarking range (RFC 2544), which bench/xdp.sh puts on a veth pair
// between two network namespaces it makes.
var floodNet = netip.MustParsePrefix("198.18.0.0/15")

// floodNet6 is the IPv6 range of -mode spoof6: unique local addresses
// that bench/xdp.sh puts on the same veth pair (fd00:5164:7864::/64, the
// target's) and routes (fd00:5165::/32, the spoofed sources': a /64 each,
// room for millions, where 198.18.0.0/15 has 131,072 addresses).
var floodNet6 = netip.MustParsePrefix("fd00:5164::/31")

// spoof6Net is where -mode spoof6's sources are, a /64 each.
var spoof6Net = netip.MustParsePrefix("fd00:5165::/32")

// cmdFlood runs the raw-frame A2S_INFO generator of bench/xdp.sh: frames
// written with sendmmsg on an AF_PACKET socket (no qdisc), open loop, from
// inside a network namespace; answers are counted by the XDP pass program
// on the same interface.
func cmdFlood(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flood", flag.ContinueOnError)
	fs.SetOutput(stderr)
	iface := fs.String("iface", "", "interface to send on (the client's end of the veth pair)")
	dstMAC := fs.String("dst-mac", "", "the server interface's MAC address")
	target := fs.String("target", "198.18.0.1:27015", "server address (in 198.18.0.0/15)")
	mode := fs.String("mode", "token", "token: A2S_INFO with valid tokens from -sources addresses on -iface; spoof: without a token, from 4,096 random spoofed sources; spoof6: without a token, to -target6 from -spoofed IPv6 sources, a /64 each")
	target6 := fs.String("target6", "[fd00:5164:7864::1]:27015", "spoof6 mode: the server's IPv6 address (in "+floodNet6.String()+")")
	spoofed := fs.Int("spoofed", 1<<20, "spoof6 mode: distinct sources (at most 4,194,304), each sent once a round")
	sources := fs.String("sources", "198.18.1.1-16", "token mode: the client addresses (already on -iface) as FIRST-LASTBYTE")
	ports := fs.Int("ports", 1, "token mode: servers on consecutive ports from -target's (host mode); each address's source ports are spread over them")
	duration := fs.Duration("duration", 10*time.Second, "measured time (at most 2 minutes)")
	warmup := fs.Duration("warmup", time.Second, "time before the measurement")
	threads := fs.Int("threads", 1, "sending threads")
	pid := fs.Int("pid", 0, "the server's process, for its CPU time")
	rate := fs.Int("rate", 0, "frames per second offered in all (0: as fast as the threads can send); paced in batches of 64")
	proven := fs.Int("proven", 0, "a proven client on -proven-src asks A2S_INFO this many times a second during the flood, a challenge then the token query each time (0: none; at most 1000)")
	provenSrc := fs.String("proven-src", "198.18.0.2", "the proven client's address (already on -iface)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	r, err := flood(floodOpts{iface: *iface, dstMAC: *dstMAC, target: *target, target6: *target6, spoofed: *spoofed, mode: *mode, sources: *sources,
		duration: *duration, warmup: *warmup, threads: *threads, pid: *pid, ports: *ports, rate: *rate, proven: *proven, provenSrc: *provenSrc})
	if err != nil {
		fmt.Fprintln(stderr, "queryd-bench flood:", err)
		return 1
	}
	fmt.Fprintln(stdout, r)
	return 0
}

type floodOpts struct {
	iface, dstMAC, target, mode, sources string
	target6                              string // spoof6 mode's server
	spoofed                              int    // spoof6 mode's sources
	duration, warmup                     time.Duration
	threads, pid, ports                  int
	rate                                 int    // frames/s in all; 0: unpaced
	proven                               int    // the proven client's queries a second (0: none)
	provenSrc                            string // its address
}

func flood(o floodOpts) (string, error) {
	dst, err := netip.ParseAddrPort(o.target)
	if err != nil || !floodNet.Contains(dst.Addr()) {
		return "", fmt.Errorf("-target must be in %s, got %q", floodNet, o.target)
	}
	if o.duration <= 0 || o.duration+o.warmup > 2*time.Minute || o.threads < 1 || o.threads > 8 {
		return "", errors.New("-duration plus -warmup at most 2 minutes, -threads 1 to 8")
	}
	if o.rate < 0 || o.rate > 10_000_000 {
		return "", fmt.Errorf("-rate %d: want 0 (unpaced) to 10,000,000 frames/s", o.rate)
	}
	if o.ports < 1 || o.ports > 256 || int(dst.Port())+o.ports-1 > 65535 {
		return "", fmt.Errorf("-ports %d: want 1 to 256, the last port at most 65535", o.ports)
	}
	if err := notRootNamespace(); err != nil {
		return "", err
	}
	if o.proven < 0 || o.proven > 1000 {
		return "", fmt.Errorf("-proven %d: want 0 to 1000 queries a second", o.proven)
	}
	ifc, err := net.InterfaceByName(o.iface)
	if err != nil {
		return "", err
	}
	dmac, err := net.ParseMAC(o.dstMAC)
	if err != nil {
		return "", fmt.Errorf("-dst-mac: %w", err)
	}
	// First: the token round's answers come back through it too.
	pass, err := xdp.AttachPass(o.iface)
	if err != nil {
		return "", err
	}
	defer pass.Close()
	var frames [][]byte
	switch o.mode {
	case "token":
		frames, err = tokenFrames(ifc.HardwareAddr, dmac, dst, o.ports, o.sources)
	case "spoof":
		frames = spoofFrames(ifc.HardwareAddr, dmac, dst)
	case "spoof6":
		frames, err = spoof6Frames(ifc.HardwareAddr, dmac, o.target6, o.spoofed)
	default:
		err = fmt.Errorf("-mode token or spoof, got %q", o.mode)
	}
	if err != nil {
		return "", err
	}
	fd, err := packetSocket(ifc.Index)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	var pc *provenClient
	if o.proven > 0 {
		src, err := netip.ParseAddr(o.provenSrc)
		if err != nil || !floodNet.Contains(src) {
			return "", fmt.Errorf("-proven-src must be in %s, got %q", floodNet, o.provenSrc)
		}
		if pc, err = newProvenClient(src, dst); err != nil {
			return "", err
		}
		defer pc.c.Close()
	}
	return measureFlood(o, fd, frames, pass, pc)
}

// measureFlood sends frames in a loop on threads until warmup+duration and
// measures the window.
// With pc, the proven client runs meanwhile and its figures end the line.
func measureFlood(o floodOpts, fd int, frames [][]byte, pass *xdp.Pass, pc *provenClient) (string, error) {
	var sent atomic.Uint64
	var stop atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, o.threads)
	for i := 0; i < o.threads; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errc <- sendLoop(fd, frames, i*len(frames)/o.threads, float64(o.rate)/float64(o.threads), &sent, &stop)
		}(i)
	}
	time.Sleep(o.warmup)
	var pstop atomic.Bool
	pdone := make(chan struct{})
	if pc != nil {
		go func() {
			defer close(pdone)
			pc.run(o.proven, &pstop)
		}()
	} else {
		close(pdone)
	}
	s0, a0, m0, srv0 := sent.Load(), mustUDP(pass), machineCPU(), serverCPU(o.pid)
	start := time.Now()
	time.Sleep(o.duration)
	s1, a1, m1, srv1 := sent.Load(), mustUDP(pass), machineCPU(), serverCPU(o.pid)
	secs := time.Since(start).Seconds()
	pstop.Store(true)
	<-pdone
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			return "", err
		}
	}
	answers := float64(a1 - a0)
	tail := ""
	if pc != nil {
		asked, ok := pc.asked.Load(), pc.answer.Load()
		tail = fmt.Sprintf(" proven_asked=%d proven_answered=%d proven_share=%.4f", asked, ok, float64(ok)/float64(max(asked, 1)))
	}
	if answers == 0 {
		answers = 1 // a flood the program drops whole (the proven-source tier) answers nothing
	}
	perAnswer := func(d time.Duration) float64 { return float64(d.Microseconds()) / answers }
	return fmt.Sprintf("RESULT mode=%s offered_per_s=%.0f answered_per_s=%.0f machine_cpu_us_per_answer=%.3f softirq_us_per_answer=%.3f server_cpu_us_per_answer=%.3f seconds=%.3f",
		o.mode, float64(s1-s0)/secs, answers/secs, perAnswer(m1.busy-m0.busy), perAnswer(m1.softirq-m0.softirq),
		perAnswer(srv1-srv0), secs) + tail, nil
}

func mustUDP(p *xdp.Pass) uint64 {
	n, _ := p.UDP()
	return n
}

// notRootNamespace refuses to flood from anywhere but a named network
// namespace (one that ip netns made, as bench/xdp.sh does): never from the
// host's own.
func notRootNamespace() error {
	var self unix.Stat_t
	if err := unix.Stat("/proc/self/ns/net", &self); err != nil {
		return fmt.Errorf("network namespace: %w", err)
	}
	named, _ := os.ReadDir("/run/netns")
	for _, e := range named {
		var st unix.Stat_t
		if unix.Stat("/run/netns/"+e.Name(), &st) == nil && st.Dev == self.Dev && st.Ino == self.Ino {
			return nil
		}
	}
	return errors.New("run inside the network namespace bench/xdp.sh makes (ip netns exec), not in the host's")
}

// packetSocket is an AF_PACKET socket bound to ifindex that sends frames
// as they are, past the qdisc.
func packetSocket(ifindex int) (int, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("AF_PACKET socket (needs CAP_NET_RAW): %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1)
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4<<20)
	return fd, nil
}

// mmsghdr is struct mmsghdr.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
	_   [4]byte
}

// sendLoop sends frames in batches of 64 with sendmmsg, starting at first,
// until stop; ENOBUFS (a full device queue) is waited out. With rate > 0
// (frames/s) it sleeps before each batch that would run ahead of it.
func sendLoop(fd int, frames [][]byte, first int, rate float64, sent *atomic.Uint64, stop *atomic.Bool) error {
	const batch = 64
	iov := make([]unix.Iovec, len(frames))
	for i, f := range frames {
		iov[i].Base = &f[0]
		iov[i].SetLen(len(f))
	}
	msgs := make([]mmsghdr, batch)
	start, mine := time.Now(), 0.0
	for i := first; !stop.Load(); {
		if rate > 0 {
			if ahead := time.Duration(mine/rate*1e9) - time.Since(start); ahead > 0 {
				time.Sleep(ahead)
			}
		}
		for j := range msgs {
			k := (i + j) % len(frames)
			msgs[j].hdr.Iov = &iov[k]
			msgs[j].hdr.SetIovlen(1)
		}
		n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), batch, 0, 0, 0)
		switch {
		case errno == unix.ENOBUFS || errno == unix.EAGAIN || errno == unix.EINTR:
			continue
		case errno != 0:
			return fmt.Errorf("sendmmsg: %w", errno)
		}
		sent.Add(uint64(n))
		mine += float64(n)
		i = (i + int(n)) % len(frames)
	}
	return nil
}

// tokenFrames asks each source address for its A2S token over a normal
// socket, then builds token-bearing A2S_INFO frames from it, 256 source
// ports per address (so that the socket path's SO_REUSEPORT hash spreads
// them over its sockets). With ports > 1 (servers of one host on
// consecutive ports), source port p goes to server p % ports, with the
// token that server gave the address.
func tokenFrames(smac, dmac net.HardwareAddr, dst netip.AddrPort, ports int, sources string) ([][]byte, error) {
	addrs, err := parseSources(sources)
	if err != nil {
		return nil, err
	}
	var frames [][]byte
	for _, a := range addrs {
		reqs := make([][]byte, ports)
		for k := range reqs {
			tok, err := askToken(a, netip.AddrPortFrom(dst.Addr(), dst.Port()+uint16(k)))
			if err != nil {
				return nil, err
			}
			reqs[k] = append([]byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00"), tok...)
		}
		for p := 0; p < 256; p++ {
			to := netip.AddrPortFrom(dst.Addr(), dst.Port()+uint16(p%ports))
			frames = append(frames, udpFrame(smac, dmac, netip.AddrPortFrom(a, uint16(20000+p)), to, reqs[p%ports]))
		}
	}
	return frames, nil
}

// spoofFrames builds 4,096 token-less A2S_INFO frames from random sources
// in 198.18.128.0/17 (no such host exists: the answers come back to the
// veth and are counted, then dropped by the client namespace's kernel).
func spoofFrames(smac, dmac net.HardwareAddr, dst netip.AddrPort) [][]byte {
	req := []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")
	rng := rand.New(rand.NewPCG(1, 2))
	frames := make([][]byte, 4096)
	for i := range frames {
		a := netip.AddrFrom4([4]byte{198, 18, 128 | byte(rng.IntN(128)), byte(rng.IntN(256))})
		frames[i] = udpFrame(smac, dmac, netip.AddrPortFrom(a, uint16(1024+rng.IntN(60000))), dst, req)
	}
	return frames
}

// spoof6Frames builds n token-less A2S_INFO frames to target from n
// distinct IPv6 sources in spoof6Net, a /64 each (the budgets' and the
// counts' unit), in one allocation: every frame of a round misses any
// per-source table smaller than n.
func spoof6Frames(smac, dmac net.HardwareAddr, target string, n int) ([][]byte, error) {
	dst, err := netip.ParseAddrPort(target)
	if err != nil || !dst.Addr().Is6() || !floodNet6.Contains(dst.Addr()) {
		return nil, fmt.Errorf("-target6 must be in %s, got %q", floodNet6, target)
	}
	if n < 1 || n > 1<<22 {
		return nil, fmt.Errorf("-spoofed %d: want 1 to 4,194,304", n)
	}
	req := []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")
	size := 14 + 40 + 8 + len(req)
	slab := make([]byte, n*size)
	frames := make([][]byte, n)
	base := spoof6Net.Addr().As16()
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range frames {
		a := base
		binary.BigEndian.PutUint32(a[4:8], uint32(i)) // the /64: fd00:5165:HHHH:LLLL::
		a[15] = 1
		src := netip.AddrPortFrom(netip.AddrFrom16(a), uint16(1024+rng.IntN(60000)))
		frames[i] = slab[i*size : (i+1)*size : (i+1)*size]
		udpFrame6(frames[i], smac, dmac, src, dst, req)
	}
	rng.Shuffle(n, func(i, j int) { frames[i], frames[j] = frames[j], frames[i] })
	return frames, nil
}

// udpFrame6 writes an Ethernet + IPv6 + UDP frame with its checksum into
// b (exactly its size).
func udpFrame6(b []byte, smac, dmac net.HardwareAddr, src, dst netip.AddrPort, payload []byte) {
	copy(b[0:6], dmac)
	copy(b[6:12], smac)
	binary.BigEndian.PutUint16(b[12:], 0x86DD)
	ip := b[14:54]
	binary.BigEndian.PutUint32(ip[0:], 0x60000000)
	ulen := uint16(8 + len(payload))
	binary.BigEndian.PutUint16(ip[4:], ulen)
	ip[6], ip[7] = 17, 64
	s16, d16 := src.Addr().As16(), dst.Addr().As16()
	copy(ip[8:24], s16[:])
	copy(ip[24:40], d16[:])
	u := b[54:]
	binary.BigEndian.PutUint16(u[0:], src.Port())
	binary.BigEndian.PutUint16(u[2:], dst.Port())
	binary.BigEndian.PutUint16(u[4:], ulen)
	copy(u[8:], payload)
	pseudo := uint32(17) + uint32(ulen)
	for i := 0; i < 16; i += 2 {
		pseudo += uint32(binary.BigEndian.Uint16(s16[i:])) + uint32(binary.BigEndian.Uint16(d16[i:]))
	}
	c := ^csum(u, pseudo)
	if c == 0 {
		c = 0xFFFF
	}
	binary.BigEndian.PutUint16(u[6:], c)
}

// parseSources reads "198.18.1.1-16": the addresses 198.18.1.1 to .16.
func parseSources(s string) ([]netip.Addr, error) {
	first, last, ok := strings.Cut(s, "-")
	a, err := netip.ParseAddr(first)
	n, err2 := strconv.Atoi(last)
	if !ok || err != nil || err2 != nil || !a.Is4() || !floodNet.Contains(a) || n < int(a.As4()[3]) || n > 254 {
		return nil, fmt.Errorf("-sources: want FIRST-LASTBYTE in %s such as 198.18.1.1-16, got %q", floodNet, s)
	}
	var out []netip.Addr
	for b := int(a.As4()[3]); b <= n; b++ {
		v := a.As4()
		v[3] = byte(b)
		out = append(out, netip.AddrFrom4(v))
	}
	return out, nil
}

// askToken gets src's A2S challenge token from the server.
func askToken(src netip.Addr, dst netip.AddrPort) ([]byte, error) {
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)), net.UDPAddrFromAddrPort(dst))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	buf := make([]byte, 1500)
	for try := 0; try < 5; try++ {
		c.Write([]byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00"))
		c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(buf)
		if err == nil && n == 9 && buf[4] == 'A' {
			return append([]byte{}, buf[5:9]...), nil
		}
	}
	return nil, fmt.Errorf("no challenge for %s from %s", src, dst)
}

// udpFrame is an Ethernet + IPv4 + UDP frame with both checksums.
func udpFrame(smac, dmac net.HardwareAddr, src, dst netip.AddrPort, payload []byte) []byte {
	b := make([]byte, 14+20+8+len(payload))
	copy(b[0:6], dmac)
	copy(b[6:12], smac)
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[14:34]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+len(payload)))
	binary.BigEndian.PutUint16(ip[6:], 0x4000)
	ip[8], ip[9] = 64, 17
	s4, d4 := src.Addr().As4(), dst.Addr().As4()
	copy(ip[12:16], s4[:])
	copy(ip[16:20], d4[:])
	binary.BigEndian.PutUint16(ip[10:], ^csum(ip, 0))
	u := b[34:]
	binary.BigEndian.PutUint16(u[0:], src.Port())
	binary.BigEndian.PutUint16(u[2:], dst.Port())
	binary.BigEndian.PutUint16(u[4:], uint16(8+len(payload)))
	copy(u[8:], payload)
	pseudo := uint32(17) + uint32(8+len(payload))
	pseudo += uint32(binary.BigEndian.Uint16(s4[0:])) + uint32(binary.BigEndian.Uint16(s4[2:]))
	pseudo += uint32(binary.BigEndian.Uint16(d4[0:])) + uint32(binary.BigEndian.Uint16(d4[2:]))
	c := ^csum(u, pseudo)
	if c == 0 {
		c = 0xFFFF
	}
	binary.BigEndian.PutUint16(u[6:], c)
	return b
}

// csum is the folded ones' complement sum of b plus seed.
func csum(b []byte, seed uint32) uint16 {
	s := seed
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xFFFF + s>>16
	}
	return uint16(s)
}

// cpuTimes are the whole machine's busy and softirq times from /proc/stat.
type cpuTimes struct{ busy, softirq time.Duration }

func machineCPU() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	tick := func(i int) time.Duration {
		if i >= len(f) {
			return 0
		}
		n, _ := strconv.ParseInt(f[i], 10, 64)
		return time.Duration(n) * 10 * time.Millisecond // USER_HZ = 100
	}
	busy := tick(1) + tick(2) + tick(3) + tick(6) + tick(7) + tick(8)
	return cpuTimes{busy: busy, softirq: tick(7)}
}

// serverCPU is the server process's utime + stime (0 without a pid).
func serverCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	d, _ := procCPU(pid)
	return d
}

package hostile

// The suite's reflection attacks against the XDP fast path. queryd runs in
// the server namespace of a test network (internal/netnstest) with the
// program attached natively to its end of the veth; the spoofed requests
// are raw datagrams sent from the client namespace with addresses of
// netnstest.Spoofed, which the server routes back to the client's end of
// the veth; a packet socket there counts every reply (the program's, sent
// with XDP_TX, and the socket path's) per destination address. Nothing is
// sent outside the two namespaces.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/internal/netnstest"
	"github.com/queryd/queryd/sagl"
)

// xdpPort is the daemon's UDP port in the test network.
const xdpPort = 27015

// xdpDaemon is queryd in a test network's server namespace with the fast
// path attached, a raw sender and a reply capture in the client namespace.
type xdpDaemon struct {
	*Daemon
	net  *netnstest.Net
	dst  netip.AddrPort
	raw  *rawSender
	cap  *replyCapture
	ncpu int // the program's unproven budget is split among the possible CPUs
}

// startXDPDaemon starts queryd on the base config with over laid on top,
// listening on netnstest.ServerAddr4 with [xdp] interfaces naming the
// server's end of the veth, and fails unless the program is attached in
// native mode and answering.
func startXDPDaemon(t *testing.T, over Tables) *xdpDaemon {
	t.Helper()
	return startXDPDaemonWith(t, over, nil)
}

// startXDPDaemonWith is startXDPDaemon with prepare run on the daemon
// before it starts (a host's server files; nil: nothing).
func startXDPDaemonWith(t *testing.T, over Tables, prepare func(d *Daemon, n *netnstest.Net)) *xdpDaemon {
	t.Helper()
	n := netnstest.New(t)
	d := newDaemon(t, nil)
	x := &xdpDaemon{Daemon: d, net: n, dst: netip.AddrPortFrom(netnstest.ServerAddr4, xdpPort), ncpu: possibleCPUs(t)}
	d.Netns = n.ServerNS
	d.UDPAddr = x.dst.String()
	if over == nil {
		over = Tables{}
	}
	over["xdp"] = map[string]any{"interfaces": []string{n.ServerIf}, "mode": "native"}
	d.WriteConfig(t, baseTables(), over)
	if prepare != nil {
		prepare(d, n)
	}
	d.Start(t)
	if got := d.Metrics(t).Sum("queryd_xdp_attached", "interface", n.ServerIf, "mode", "native"); got != 1 {
		t.Fatalf("queryd_xdp_attached{interface=%q,mode=\"native\"} = %v, want 1:\n%s", n.ServerIf, got, d.Output())
	}
	err := netnstest.Do(n.ClientNS, func() (err error) {
		if x.raw, err = newNetRawSender(x.dst); err != nil {
			return err
		}
		x.cap, err = newReplyCapture(n.ClientIf, x.dst)
		return err
	})
	if x.raw != nil {
		t.Cleanup(func() { x.raw.Close() })
	}
	if x.cap != nil {
		t.Cleanup(x.cap.Close)
	}
	if err != nil {
		t.Fatal(err)
	}
	x.warm(t)
	return x
}

// warm waits until the program answers an A2S_INFO with a challenge and
// the socket path a Quake 3 getinfo with a challenge argument, from the
// client's own address: the replies are published and both namespaces
// know each other's Ethernet address before a flood starts.
func (x *xdpDaemon) warm(t *testing.T) {
	t.Helper()
	var c *net.UDPConn
	err := netnstest.Do(x.net.ClientNS, func() (err error) {
		c, err = net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(x.dst))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := x.Metrics(t)
	buf := make([]byte, 2048)
	for _, req := range [][]byte{[]byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00"), []byte("\xFF\xFF\xFF\xFFgetinfo warm")} {
		deadline := time.Now().Add(5 * time.Second)
		for {
			c.Write(req)
			c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			if _, err := c.Read(buf); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("% X: no answer within 5 s:\n%s", req, x.Output())
			}
		}
	}
	if got := x.Metrics(t).Sub(before).Sum("queryd_xdp_requests_total", "protocol", "a2s", "outcome", "challenged"); got < 1 {
		t.Fatalf("the A2S challenge did not come from the program (queryd_xdp_requests_total grew by %v)", got)
	}
}

// spoofed returns n source addresses of netnstest.Spoofed, from first on
// (1 to 254), each with its own port.
func spoofed(t *testing.T, first, n int) []netip.AddrPort {
	t.Helper()
	if first < 1 || first+n > 255 {
		t.Fatalf("spoofed sources %d to %d: outside 1 to 254", first, first+n-1)
	}
	base := netnstest.Spoofed.Addr().As4()
	out := make([]netip.AddrPort, n)
	for i := range out {
		a := base
		a[3] = byte(first + i)
		out[i] = netip.AddrPortFrom(netip.AddrFrom4(a), uint16(40000+i))
	}
	return out
}

// floodRaw sends reqs in turn, each round-robin from srcs, at rate
// datagrams per second for d; a source's port changes every round (the
// socket path's receive loops are chosen by a hash of the ports). It
// returns when it began.
func (x *xdpDaemon) floodRaw(t *testing.T, srcs []netip.AddrPort, reqs [][]byte, rate float64, d time.Duration) time.Time {
	t.Helper()
	p := newPacer(rate)
	n := int(rate * d.Seconds())
	for i := 0; i < n; i++ {
		p.Wait(i)
		j := i / len(reqs)
		s := srcs[j%len(srcs)]
		src := netip.AddrPortFrom(s.Addr(), s.Port()+uint16(j/len(srcs)%64))
		if err := x.raw.Send(src, reqs[i%len(reqs)]); err != nil {
			t.Fatalf("flood send: %v", err)
		}
	}
	return p.start
}

// txErrors returns the replies the program sent with XDP_TX that the
// client's end of the veth had no room for, so far.
func (x *xdpDaemon) txErrors(t *testing.T) uint64 {
	t.Helper()
	n, err := x.net.XDPTxErrors()
	if err != nil {
		t.Fatalf("the veth's XDP_TX errors: %v", err)
	}
	return n
}

// tally is what the capture saw go to one address.
type tally struct {
	bytes, n int64 // UDP payload bytes, datagrams
	last     int64 // Unix ns of the last one
	largest  int   // the largest payload
}

// replyCapture counts the UDP datagrams from the daemon's address that
// reach the client's end of the veth, per destination address, with a
// packet socket (it sees replies to addresses no socket there holds);
// src's port 0 counts those from every port of its address.
type replyCapture struct {
	fd   int
	src  netip.AddrPort
	mu   sync.Mutex
	per  map[netip.Addr]*tally
	stop atomic.Bool
	done chan struct{}
}

// newReplyCapture opens the packet socket on ifname in the calling
// thread's network namespace (netnstest.Do) and starts reading.
func newReplyCapture(ifname string, src netip.AddrPort) (*replyCapture, error) {
	ifc, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, err
	}
	proto := int(htons(unix.ETH_P_IP))
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return nil, fmt.Errorf("packet socket: %w", err)
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16<<20)
	tv := unix.NsecToTimeval(int64(50 * time.Millisecond))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: uint16(proto), Ifindex: ifc.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind the packet socket to %s: %w", ifname, err)
	}
	c := &replyCapture{fd: fd, src: src, per: map[netip.Addr]*tally{}, done: make(chan struct{})}
	go c.read()
	return c, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func (c *replyCapture) read() {
	defer close(c.done)
	buf := make([]byte, 65536)
	for !c.stop.Load() {
		n, from, err := unix.Recvfrom(c.fd, buf, 0)
		if err != nil {
			continue // the receive timeout, to look at stop
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		c.count(buf[:n])
	}
}

// count records one IPv4 packet if it is a UDP datagram from the daemon.
func (c *replyCapture) count(p []byte) {
	if len(p) < 20 || p[0]>>4 != 4 || p[9] != unix.IPPROTO_UDP {
		return
	}
	ihl := int(p[0]&0x0F) * 4
	if len(p) < ihl+8 {
		return
	}
	src := netip.AddrFrom4([4]byte(p[12:16]))
	dst := netip.AddrFrom4([4]byte(p[16:20]))
	if port := binary.BigEndian.Uint16(p[ihl:]); src != c.src.Addr() || (c.src.Port() != 0 && port != c.src.Port()) {
		return
	}
	size := int(binary.BigEndian.Uint16(p[ihl+4:])) - 8
	c.mu.Lock()
	defer c.mu.Unlock()
	tl := c.per[dst]
	if tl == nil {
		tl = &tally{}
		c.per[dst] = tl
	}
	tl.bytes += int64(size)
	tl.n++
	tl.last = time.Now().UnixNano()
	tl.largest = max(tl.largest, size)
}

// sum adds what went to srcs' addresses; last is the latest datagram's time.
func (c *replyCapture) sum(srcs []netip.AddrPort) (t tally, worst int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[netip.Addr]bool{}
	for _, s := range srcs {
		a := s.Addr()
		if seen[a] {
			continue
		}
		seen[a] = true
		if tl := c.per[a]; tl != nil {
			t.bytes += tl.bytes
			t.n += tl.n
			t.last = max(t.last, tl.last)
			t.largest = max(t.largest, tl.largest)
			worst = max(worst, tl.bytes)
		}
	}
	return t, worst
}

// waitQuiet waits until nothing has come for quiet (counted from the call
// at the earliest), or limit has passed.
func (c *replyCapture) waitQuiet(quiet, limit time.Duration) {
	start := time.Now()
	deadline := start.Add(limit)
	for time.Now().Before(deadline) {
		time.Sleep(quiet / 4)
		c.mu.Lock()
		last := start.UnixNano()
		for _, tl := range c.per {
			last = max(last, tl.last)
		}
		c.mu.Unlock()
		if time.Since(time.Unix(0, last)) >= quiet {
			return
		}
	}
}

// Close stops reading and closes the socket.
func (c *replyCapture) Close() {
	c.stop.Store(true)
	<-c.done
	unix.Close(c.fd)
}

// possibleCPUs counts /sys/devices/system/cpu/possible ("0-1", "0,2-3"):
// the program keeps a share of the unproven budget for each.
func possibleCPUs(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		first, err1 := strconv.Atoi(lo)
		last, err2 := strconv.Atoi(hi)
		if err := errors.Join(err1, err2); err != nil || last < first {
			t.Fatalf("possible CPUs %q: %v", b, err)
		}
		n += last - first + 1
	}
	return n
}

// xdpRequest is one request type sent from unproven sources.
type xdpRequest struct {
	proto, name string
	bytes       []byte
	inProgram   bool // the program answers (or drops) it; else it goes to the socket path
}

// xdpUnproven are the requests the program answers for sources without a
// token, and a GameSpy4 stat and an SQP query with a made-up token, which
// it passes to the socket path (which ignores them).
func xdpUnproven() []xdpRequest {
	return []xdpRequest{
		{"a2s", "A2S_INFO", []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00"), true},
		{"a2s", "A2S_INFO, made-up token", []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00\x01\x02\x03\x04"), true},
		{"a2s", "A2S_PLAYER, token -1", []byte("\xFF\xFF\xFF\xFFU\xFF\xFF\xFF\xFF"), true},
		{"a2s", "A2S_RULES, token -1", []byte("\xFF\xFF\xFF\xFFV\xFF\xFF\xFF\xFF"), true},
		{"a2s", "A2S_PLAYER, made-up token", []byte("\xFF\xFF\xFF\xFFU\x01\x02\x03\x04"), true},
		{"gamespy4", "handshake", []byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4}, true},
		{"gamespy4", "full stat, made-up token", []byte{0xFE, 0xFD, 0x00, 1, 2, 3, 4, 0x00, 0x01, 0x02, 0x03, 0xFF, 0xFF, 0xFF, 0x01}, false},
		{"quake3", "getinfo", []byte("\xFF\xFF\xFF\xFFgetinfo"), true},
		{"quake3", "getstatus", []byte("\xFF\xFF\xFF\xFFgetstatus"), true},
		{"sqp", "challenge", []byte{0, 0, 0, 0, 0}, true},
		{"sqp", "query, made-up token", []byte{0x01, 1, 2, 3, 4, 0, 1, 0x1F}, false},
		{"bedrock", "ping", bedrock.AppendPing(nil, 0x1122334455667788, 0), true},
		{"sagl", "info, token 0", sagl.AppendRequest(nil, sagl.Request{Kind: sagl.KindInfo}), true},
		{"sagl", "info, made-up token", sagl.AppendRequest(nil, sagl.Request{Kind: sagl.KindInfo, Token: 0x01020304}), true},
	}
}

// TestXDPReflectionRatio: with the fast path attached, every request type
// the program answers for sources that never complete a challenge, from 8
// spoofed addresses each, 12 datagrams each (more than Quake 3's and
// Bedrock's packet bursts, which are off here), budgets far above the traffic:
// bytes out ÷ bytes in. A2S, SQP and SAGL answer no more than they
// receive; a GameSpy4 stat and an SQP query with a made-up token get
// nothing; the program (not the socket path) answered every request it
// claims, and the metrics count the bytes the capture saw.
func TestXDPReflectionRatio(t *testing.T) {
	x := startXDPDaemon(t, Tables{"limits": generousLimits, "quake3": {"packet_rate": 0}, "bedrock": {"packet_rate": 0}})
	const perSource, sourcesPerReq = 12, 8
	reqs := xdpUnproven()
	srcs := make([][]netip.AddrPort, len(reqs))
	for i := range reqs {
		srcs[i] = spoofed(t, 1+i*sourcesPerReq, sourcesPerReq)
	}
	before := x.Metrics(t)
	for k := 0; k < perSource; k++ {
		for i, r := range reqs {
			for _, s := range srcs[i] {
				if err := x.raw.Send(s, r.bytes); err != nil {
					t.Fatal(err)
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	x.cap.waitQuiet(300*time.Millisecond, 5*time.Second)
	delta := x.Metrics(t).Sub(before)

	var table strings.Builder
	fmt.Fprintf(&table, "%-9s %-26s %5s %6s %6s %6s\n", "protocol", "request", "bytes", "in", "out", "ratio")
	out := map[string]int64{}
	inProgram := map[string]float64{}
	for i, r := range reqs {
		got, _ := x.cap.sum(srcs[i])
		in := int64(len(r.bytes) * perSource * sourcesPerReq)
		ratio := float64(got.bytes) / float64(in)
		out[r.proto] += got.bytes
		if r.inProgram {
			inProgram[r.proto] += float64(perSource * sourcesPerReq)
		}
		fmt.Fprintf(&table, "%-9s %-26s %5d %6d %6d %6.3f\n", r.proto, r.name, len(r.bytes), in, got.bytes, ratio)
		if neverAmplifies(r.proto) && ratio > 1.0 {
			t.Errorf("%s: %d bytes out for %d in (ratio %.3f > 1.0): an amplifier", r.name, got.bytes, in, ratio)
		}
		if !r.inProgram && got.n != 0 {
			t.Errorf("%s %s: %d replies to sources that never completed a challenge", r.proto, r.name, got.n)
		}
		if r.inProgram && got.n != perSource*sourcesPerReq {
			t.Errorf("%s %s: %d replies to %d requests under generous budgets", r.proto, r.name, got.n, perSource*sourcesPerReq)
		}
	}
	for proto, want := range inProgram {
		if got := delta.Sum("queryd_xdp_requests_total", "protocol", proto); got != want {
			t.Errorf("%s: the program counted %v requests, want %v (all it claims)", proto, got, want)
		}
		if got := delta.Sum("queryd_sent_bytes_total", "protocol", proto); got != float64(out[proto]) {
			t.Errorf("%s: queryd_sent_bytes_total grew by %v; the capture saw %d bytes", proto, got, out[proto])
		}
		fmt.Fprintf(&table, "%-9s outcomes (both paths): %v\n", proto, delta.Requests(proto))
	}
	t.Logf("XDP reflection, %d spoofed sources per request type, %d datagrams each:\n%s", sourcesPerReq, perSource, table.String())
}

// xdpShares are the fast path's budgets for the configured ones: half of
// [limits] while it is attached (daemon.shareLimits, bursts at least 1,500
// bytes), the unproven half split among the CPUs (each share's burst at
// least 1,500 bytes).
type xdpShares struct {
	perIPRate, perIPBurst     float64
	unpRate, unpBurst, unpCPU float64 // total rate and burst; one CPU's burst
}

func sharesOf(perIPRate, perIPBurst, unpRate, unpBurst, ncpu int) xdpShares {
	half := func(v int) int { return max(v/2, 1500) }
	cpuBurst := max(half(unpBurst)/ncpu, 1500)
	return xdpShares{
		perIPRate: float64(perIPRate / 2), perIPBurst: float64(half(perIPBurst)),
		unpRate: float64(unpRate / 2 / ncpu * ncpu), unpBurst: float64(cpuBurst * ncpu), unpCPU: float64(cpuBurst),
	}
}

// TestXDPReflectionCaps: TestReflectionCaps's floods of the request types
// that answer more than they receive, against the program: the replies
// drawn stay within TestReflectionCaps's per-IP and global caps, and within
// the program's share of them (half, while the socket path keeps the other
// half); the flood pressed on the cap that binds. The program's global
// share is split among the CPUs and a flood from one sender reaches the
// program mostly on one CPU: the lower bound is one CPU's share.
func TestXDPReflectionCaps(t *testing.T) {
	t.Parallel() // namespaces of its own, a flood of 4,000/s; it mostly waits for the budgets to refill
	x := startXDPDaemon(t, Tables{
		"listen": {"workers": testWorkers},
		"limits": {
			"per_ip_rate": capPerIPRate, "per_ip_burst": capPerIPBurst,
			"unproven_rate": capUnprovenRate, "unproven_burst": capUnprovenBurst,
		},
		"quake3":  {"packet_rate": 0},
		"bedrock": {"packet_rate": 0},
	})
	sh := sharesOf(capPerIPRate, capPerIPBurst, capUnprovenRate, capUnprovenBurst, x.ncpu)
	const floodFor = 500 * time.Millisecond
	cases := []struct {
		name    string
		req     []byte
		sources int
	}{
		{"gamespy4 handshake, 1 source", []byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4}, 1},
		{"gamespy4 handshake, 16 sources", []byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4}, 16},
		{"quake3 getstatus, 1 source", []byte("\xFF\xFF\xFF\xFFgetstatus"), 1},
		{"quake3 getstatus, 16 sources", []byte("\xFF\xFF\xFF\xFFgetstatus"), 16},
		{"quake3 getinfo, 16 sources", []byte("\xFF\xFF\xFF\xFFgetinfo"), 16},
		{"bedrock ping, 1 source", bedrock.AppendPing(nil, 0x1122334455667788, 0), 1},
		{"bedrock ping, 16 sources", bedrock.AppendPing(nil, 0x1122334455667788, 0), 16},
	}
	// The unproven shares are global: each case waits until the last one's
	// draw has refilled (per-IP buckets are the new sources' own).
	refill := time.Duration(sh.unpCPU / (sh.unpRate / float64(x.ncpu)) * float64(time.Second))
	for ci, c := range cases {
		srcs := spoofed(t, 1+ci*16, c.sources)
		time.Sleep(refill)
		before := x.Metrics(t)
		start := x.floodRaw(t, srcs, [][]byte{c.req}, 4000, floodFor)
		x.cap.waitQuiet(300*time.Millisecond, 3*time.Second)
		got, worst := x.cap.sum(srcs)
		delta := x.Metrics(t).Sub(before)
		window := time.Unix(0, got.last).Sub(start).Seconds()
		slack := float64(got.largest) // one reply
		perIPCap := capPerIPBurst + capPerIPRate*window + slack
		globalCap := float64(unprovenBurstTotal(capUnprovenBurst)) + capUnprovenRate*window + slack
		perIPShare := sh.perIPBurst + sh.perIPRate*window + slack
		globalShare := sh.unpBurst + sh.unpRate*window + slack
		if float64(worst) > perIPCap || float64(worst) > perIPShare {
			t.Errorf("%s: a source got %d bytes in %.2f s; the per-IP cap allows %.0f, the program's share %.0f", c.name, worst, window, perIPCap, perIPShare)
		}
		if float64(got.bytes) > globalCap || float64(got.bytes) > globalShare {
			t.Errorf("%s: %d bytes to unproven sources in %.2f s; the global cap allows %.0f, the program's share %.0f", c.name, got.bytes, window, globalCap, globalShare)
		}
		// What the binding cap grants over the flood, on one CPU at least.
		lower := min((sh.perIPBurst+sh.perIPRate*floodFor.Seconds())*float64(c.sources), sh.unpCPU+sh.unpRate/float64(x.ncpu)*floodFor.Seconds())
		if float64(got.bytes) < 0.6*lower {
			t.Errorf("%s: only %d bytes out in %v (the cap grants at least %.0f): the flood did not reach the budget, or another limit held it", c.name, got.bytes, floodFor, lower)
		}
		if p := delta.Sum("queryd_xdp_requests_total", "protocol", protoOf(c.req)); p != delta.Sum("queryd_requests_total", "protocol", protoOf(c.req)) {
			t.Errorf("%s: the program counted %v of %v requests: the socket path served some", c.name, p, delta.Sum("queryd_requests_total", "protocol", protoOf(c.req)))
		}
		t.Logf("%s: %d datagrams; replies %d B in %d datagrams over %.2f s (per source at most %d B; per-IP cap %.0f, share %.0f; global cap %.0f, share %.0f); outcomes %v",
			c.name, int(4000*floodFor.Seconds()), got.bytes, got.n, window, worst, perIPCap, perIPShare, globalCap, globalShare, delta.Requests(protoOf(c.req)))
	}
}

// TestXDPSplitPathBudget: a spoofed source whose Quake 3 requests go half
// to the program (getstatus) and half to the socket path (getstatus with a
// challenge argument, which the reply echoes) draws no more from both
// together than [limits] allows one source, and a flood from 16 such
// sources no more than the global unproven cap: the daemon gives each path
// half of [limits]. (Each path keeps its own buckets; before, each had all
// of [limits] and such a source drew about twice the caps.) The bursts
// are large enough here that the 1,500-byte floor does not round them up.
func TestXDPSplitPathBudget(t *testing.T) {
	const perIPRate, perIPBurst, unpRate, unpBurst = 2048, 8192, 8192, 16384
	x := startXDPDaemon(t, Tables{
		"listen": {"workers": testWorkers},
		"limits": {
			"per_ip_rate": perIPRate, "per_ip_burst": perIPBurst,
			"unproven_rate": unpRate, "unproven_burst": unpBurst,
		},
		"quake3": {"packet_rate": 0},
	})
	fast, slow := []byte("\xFF\xFF\xFF\xFFgetstatus"), []byte("\xFF\xFF\xFF\xFFgetstatus abcdefgh")
	for ci, n := range []int{1, 16} {
		srcs := spoofed(t, 1+ci*32, n)
		before := x.Metrics(t)
		start := x.floodRaw(t, srcs, [][]byte{fast, slow}, 4000, 600*time.Millisecond)
		x.cap.waitQuiet(300*time.Millisecond, 3*time.Second)
		got, worst := x.cap.sum(srcs)
		delta := x.Metrics(t).Sub(before)
		window := time.Unix(0, got.last).Sub(start).Seconds()
		slack := 2 * float64(got.largest) // a reply on each path
		perIPCap := perIPBurst + perIPRate*window + slack
		globalCap := float64(unprovenBurstTotal(unpBurst)) + unpRate*window + slack
		prog := delta.Sum("queryd_xdp_requests_total", "protocol", "quake3", "outcome", "answered")
		all := delta.Requests("quake3")["answered"]
		t.Logf("%d source(s): replies %d B in %d datagrams over %.2f s, at most %d B to one source (per-IP cap %.0f, global cap %.0f); answered %v by the program, %v by the socket path",
			n, got.bytes, got.n, window, worst, perIPCap, globalCap, prog, all-prog)
		if prog == 0 || all-prog == 0 {
			t.Fatalf("%d source(s): answered %v by the program and %v by the socket path: the flood must reach both", n, prog, all-prog)
		}
		if float64(worst) > perIPCap {
			t.Errorf("%d source(s): one source drew %d B over both paths; the per-IP cap allows %.0f", n, worst, perIPCap)
		}
		if float64(got.bytes) > globalCap {
			t.Errorf("%d source(s): %d B to unproven sources over both paths; the global cap allows %.0f", n, got.bytes, globalCap)
		}
	}
}

// TestXDPQuake3PacketRate: TestQuake3PacketRate with the fast path on (and
// Bedrock on, as in every suite daemon, with its own rate of 2/s): getinfo
// floods from a few spoofed sources at the default Quake 3 packet rate and
// generous byte budgets for 2 s; the program answers each source at most
// burst + rate × time.
func TestXDPQuake3PacketRate(t *testing.T) {
	x := startXDPDaemon(t, Tables{"limits": generousLimits})
	srcs := spoofed(t, 1, 4)
	before := x.Metrics(t)
	start := x.floodRaw(t, srcs, [][]byte{[]byte("\xFF\xFF\xFF\xFFgetinfo")}, 1000, 2*time.Second)
	x.cap.waitQuiet(300*time.Millisecond, 3*time.Second)
	window := time.Since(start).Seconds()
	delta := x.Metrics(t).Sub(before)
	allowed := int64(10 + 1*window)
	for _, s := range srcs {
		got, _ := x.cap.sum([]netip.AddrPort{s})
		if got.n > allowed || got.n < 10 {
			t.Errorf("source %s: %d replies to 500 getinfo in %.2f s; want 10 to %d (burst 10, then 1/s)", s.Addr(), got.n, window, allowed)
		}
	}
	if p, all := delta.Sum("queryd_xdp_requests_total", "protocol", "quake3"), delta.Sum("queryd_requests_total", "protocol", "quake3"); p != all || p != 2000 {
		t.Errorf("the program counted %v of %v Quake 3 requests (2,000 sent)", p, all)
	}
	got, _ := x.cap.sum(srcs[:1])
	t.Logf("quake3 packet rate with XDP: 500 getinfo per source in %.2f s, %d replies to the first (burst 10, then 1/s); outcomes %v", window, got.n, delta.Requests("quake3"))
}

// TestXDPProtocolFloods: spoofed floods of SQP challenges, Bedrock pings
// and SAGL requests without a token (4,000 datagrams/s for 0.5 s from 16
// sources each, budgets far above the traffic, Bedrock's packet rate off)
// are answered in the program: queryd_xdp_requests_total, the program's
// share, is all of queryd_requests_total, every request got its reply,
// and SQP and SAGL send back no more bytes than they received.
func TestXDPProtocolFloods(t *testing.T) {
	x := startXDPDaemon(t, Tables{"limits": generousLimits, "bedrock": {"packet_rate": 0}})
	const rate, floodFor = 4000, 500 * time.Millisecond
	cases := []struct {
		name, proto string
		req         []byte
	}{
		{"sqp challenge", "sqp", []byte{0, 0, 0, 0, 0}},
		{"bedrock ping", "bedrock", bedrock.AppendPing(nil, 0x1122334455667788, 0)},
		{"sagl info, token 0", "sagl", sagl.AppendRequest(nil, sagl.Request{Kind: sagl.KindInfo})},
	}
	for ci, c := range cases {
		srcs := spoofed(t, 1+ci*16, 16)
		before, lostBefore := x.Metrics(t), x.txErrors(t)
		x.floodRaw(t, srcs, [][]byte{c.req}, rate, floodFor)
		x.cap.waitQuiet(300*time.Millisecond, 3*time.Second)
		got, _ := x.cap.sum(srcs)
		delta := x.Metrics(t).Sub(before)
		lost := int64(x.txErrors(t) - lostBefore)
		sent := int64(rate * floodFor.Seconds())
		prog, all := delta.Sum("queryd_xdp_requests_total", "protocol", c.proto), delta.Sum("queryd_requests_total", "protocol", c.proto)
		ratio := float64(got.bytes) / float64(sent*int64(len(c.req)))
		t.Logf("%s: %d datagrams of %d B; %d replies, %d B (ratio %.2f), %d more lost on the veth; the program counted %v of %v requests; outcomes %v",
			c.name, sent, len(c.req), got.n, got.bytes, ratio, lost, prog, all, delta.Requests(c.proto))
		if prog != all || all != float64(sent) {
			t.Errorf("%s: the program counted %v of %v requests (%d sent): the socket path served some", c.name, prog, all, sent)
		}
		// A reply the program sent that the client's end of the veth had no
		// room for (its receive ring full while the test machine is busy) is
		// the veth's loss, counted there, not one the program did not make.
		if got.n+lost != sent {
			t.Errorf("%s: %d replies (and %d lost on the veth) to %d requests under generous budgets", c.name, got.n, lost, sent)
		}
		if neverAmplifies(c.proto) && ratio > 1.0 {
			t.Errorf("%s: ratio %.2f > 1.0", c.name, ratio)
		}
	}
}

// TestXDPBusiestSources (finding 6): 200 A2S_INFO from one spoofed source,
// all answered in the program, list that source in the status page's
// busiest sources (/status.json) with its 200 requests, challenged: the
// program counts per source and the sampler merges it with the socket
// path's table (before, the table stayed empty).
func TestXDPBusiestSources(t *testing.T) {
	x := startXDPDaemon(t, Tables{"limits": generousLimits})
	src := spoofed(t, 77, 1)
	before := x.Metrics(t)
	x.floodRaw(t, src, [][]byte{[]byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")}, 1000, 200*time.Millisecond)
	x.cap.waitQuiet(300*time.Millisecond, 3*time.Second)
	if got := x.Metrics(t).Sub(before).Sum("queryd_xdp_requests_total", "protocol", "a2s", "outcome", "challenged"); got != 200 {
		t.Fatalf("the program challenged %v of 200 A2S_INFO", got)
	}
	want := src[0].Addr().String()
	deadline := time.Now().Add(5 * time.Second) // the sampler drains once a second
	for {
		var doc struct {
			Busiest struct {
				Sources []struct {
					Source   string            `json:"source"`
					Requests uint64            `json:"requests"`
					Outcomes map[string]uint64 `json:"outcomes"`
				} `json:"sources"`
			} `json:"busiest"`
		}
		resp, err := x.HTTPClient(5 * time.Second).Get("http://" + x.AdminAddr + "/status.json")
		if err != nil {
			t.Fatalf("GET /status.json: %v", err)
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("/status.json: %v", err)
		}
		for _, s := range doc.Busiest.Sources {
			if s.Source == want {
				if s.Requests != 200 || s.Outcomes["challenged"] != 200 {
					t.Fatalf("busiest source %s: %d requests, outcomes %v; want 200 challenged", want, s.Requests, s.Outcomes)
				}
				t.Logf("busiest sources list %s: %d requests, outcomes %v", want, s.Requests, s.Outcomes)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the busiest sources do not list %s after 5 s: %+v", want, doc.Busiest.Sources)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

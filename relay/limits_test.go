package relay

import (
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var nopSender = senderFunc(func([]byte, netip.Addr, netip.AddrPort) error { return nil })

func udpAddr(c *net.UDPConn) netip.AddrPort { return c.LocalAddr().(*net.UDPAddr).AddrPort() }

// One address cannot hold more than MaxPerIP sessions: its ports past the
// cap are dropped while its sessions are active, another address still
// gets in, and once the address's sessions are quiet a new port of its own
// replaces its idlest.
func TestRelayPerIPCap(t *testing.T) {
	game := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: udpAddr(game), MaxPerIP: 3, OpenRate: 0})
	for port := 1; port <= 5; port++ {
		r.Forward([]byte("x"), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(40000+port)), netip.Addr{}, nopSender)
	}
	if n := counter(t, reg, "queryd_relay_dropped_total", "per_ip_full"); n != 2 || r.Sessions() != 3 {
		t.Fatalf("5 ports of one address with max 3 per IP: %d sessions, %v dropped as per_ip_full", r.Sessions(), n)
	}
	// An IPv6 /64 is one source: a different interface id does not help.
	for i := 1; i <= 4; i++ {
		r.Forward([]byte("x"), netip.MustParseAddrPort(fmt.Sprintf("[2001:db8:1:2::%x]:5000", i)), netip.Addr{}, nopSender)
	}
	r.Forward([]byte("x"), netip.MustParseAddrPort("[2001:db8:1:3::1]:5000"), netip.Addr{}, nopSender)
	if n := counter(t, reg, "queryd_relay_dropped_total", "per_ip_full"); n != 3 || r.Sessions() != 7 {
		t.Fatalf("4 addresses of one /64 and one of another: %d sessions, %v dropped as per_ip_full; want 7 and 3", r.Sessions(), n)
	}
	time.Sleep(evictMinIdle + 50*time.Millisecond) // the first address's sessions go quiet
	newcomer := netip.MustParseAddrPort("127.0.0.1:40100")
	r.Forward([]byte("x"), newcomer, netip.Addr{}, nopSender)
	if n := counter(t, reg, "queryd_relay_sessions_evicted_total", ""); n != 1 || r.Sessions() != 7 {
		t.Fatalf("a new port of an address at its cap with quiet sessions: %v evicted, %d sessions", n, r.Sessions())
	}
	r.mu.RLock()
	_, in := r.bySrc[newcomer]
	held := len(r.sources[sourceOf(newcomer.Addr())].sessions)
	r.mu.RUnlock()
	if !in || held != 3 {
		t.Errorf("the new port is in: %v; the address holds %d sessions, want 3", in, held)
	}
}

// A source opens at most OpenBurst sessions at once, then OpenRate a second.
func TestRelayOpenRate(t *testing.T) {
	game := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: udpAddr(game), MaxPerIP: 100, OpenRate: 5, OpenBurst: 4})
	ip := netip.MustParseAddr("127.0.0.1")
	start := time.Now()
	for port := 1; port <= 10; port++ {
		r.Forward([]byte("x"), netip.AddrPortFrom(ip, uint16(41000+port)), netip.Addr{}, nopSender)
	}
	limited := counter(t, reg, "queryd_relay_dropped_total", "open_rate")
	if r.Sessions() > 4+int(5*time.Since(start).Seconds())+1 || limited < 5 {
		t.Fatalf("10 ports at once with a burst of 4: %d sessions, %v dropped as open_rate", r.Sessions(), limited)
	}
	r.Forward([]byte("x"), netip.MustParseAddrPort("127.0.0.2:41000"), netip.Addr{}, nopSender)
	if counter(t, reg, "queryd_relay_dropped_total", "open_rate") != limited {
		t.Error("another address was limited by the first one's opening rate")
	}
	time.Sleep(250 * time.Millisecond) // a token or more comes back at 5 a second
	before := r.Sessions()
	r.Forward([]byte("x"), netip.AddrPortFrom(ip, 41100), netip.Addr{}, nopSender)
	if r.Sessions() != before+1 {
		t.Errorf("after 250 ms at 5 sessions a second the address still cannot open a session")
	}
}

// One address cycling through many ports takes at most MaxPerIP of the
// sessions; a player from another address still gets in.
func TestRelayOneAddressCannotFillSessions(t *testing.T) {
	game := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: udpAddr(game), MaxSessions: 64})
	for port := 0; port < 2000; port++ {
		r.Forward([]byte("x"), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.9"), uint16(20000+port)), netip.Addr{}, nopSender)
	}
	if r.Sessions() > DefaultMaxPerIP {
		t.Fatalf("one address holds %d sessions; the cap is %d", r.Sessions(), DefaultMaxPerIP)
	}
	r.Forward([]byte("x"), netip.MustParseAddrPort("127.0.0.4:27005"), netip.Addr{}, nopSender)
	if n := counter(t, reg, "queryd_relay_sessions_opened_total", ""); n != DefaultMaxPerIP+1 {
		t.Errorf("%v sessions opened; want the %d of the churning address and the player's", n, DefaultMaxPerIP)
	}
}

// A relay whose upstream is its own public address (the config refuses it;
// this is the second line) drops the first hop: it comes from one of the
// relay's own session sockets (counted as loop).
func TestRelaySelfLoopBounded(t *testing.T) {
	pub := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: udpAddr(pub)})
	go func() { // the public front, as publicFront, on the socket the relay points at
		buf := make([]byte, 2048)
		for {
			n, src, err := pub.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			r.Forward(buf[:n], src, netip.Addr{}, publicSender{pub})
		}
	}()
	c := listenLoopback(t)
	if _, err := c.WriteToUDPAddrPort([]byte("loop?"), udpAddr(pub)); err != nil {
		t.Fatal(err)
	}
	var opened float64
	stable := 0
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && stable < 5; {
		time.Sleep(50 * time.Millisecond)
		if n := counter(t, reg, "queryd_relay_sessions_opened_total", ""); n == opened {
			stable++
		} else {
			opened, stable = n, 0
		}
	}
	loops := counter(t, reg, "queryd_relay_dropped_total", "loop")
	t.Logf("one datagram into a relay pointing at itself: %v sessions opened, then the loop stopped (%v dropped as loop)", opened, loops)
	if stable < 5 || opened > 1 || loops != 1 {
		t.Errorf("the loop went on: %v sessions opened (still rising: %v), %v dropped as loop; want 1 and 1", opened, stable < 5, loops)
	}
}

// A failed dial (here EMFILE, the descriptor limit) gives the session's
// slot back and is counted; the next client is relayed once sockets open.
func TestRelayDialFailure(t *testing.T) {
	r, reg := newTestRelay(t, Config{GameServer: echoGame(t)})
	realDial := r.dial
	var fail atomic.Bool
	fail.Store(true)
	r.dial = func(local netip.Addr) (*net.UDPConn, error) {
		if fail.Load() {
			return nil, &net.OpError{Op: "dial", Net: "udp", Err: syscall.EMFILE}
		}
		return realDial(local)
	}
	pub := publicFront(t, r)
	c := listenLoopback(t)
	c.WriteToUDPAddrPort([]byte("x"), pub)
	if !waitUntil(2*time.Second, func() bool { return counter(t, reg, "queryd_relay_dropped_total", "dial") == 1 }) {
		t.Fatal("a failed dial was not counted")
	}
	r.mu.RLock()
	left := len(r.bySrc) + len(r.byLocal) + len(r.sources)
	r.mu.RUnlock()
	if left != 0 {
		t.Fatalf("a failed dial left %d map entries", left)
	}
	fail.Store(false)
	if got, _ := ask(t, c, pub, []byte("again")); got == "" {
		t.Error("no reply after sockets open again")
	}
}

func waitUntil(limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// A socket being opened for one client holds no lock that other clients,
// Peer or Sessions need; a second datagram of the same client waits for the
// socket and goes in the same session.
func TestRelayNoDialUnderLock(t *testing.T) {
	game := listenLoopback(t)
	r, reg := newTestRelay(t, Config{GameServer: udpAddr(game)})
	realDial := r.dial
	gate := make(chan struct{})
	var first atomic.Bool
	r.dial = func(local netip.Addr) (*net.UDPConn, error) {
		if first.CompareAndSwap(false, true) {
			<-gate // the first client's socket takes long to open
		}
		return realDial(local)
	}
	slow := netip.MustParseAddrPort("127.0.0.1:42001")
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); r.Forward([]byte("one"), slow, netip.Addr{}, nopSender) }()
	waitUntil(2*time.Second, first.Load)
	go func() { defer wg.Done(); r.Forward([]byte("two"), slow, netip.Addr{}, nopSender) }()
	done := make(chan struct{})
	go func() {
		r.Forward([]byte("other"), netip.MustParseAddrPort("127.0.0.2:42002"), netip.Addr{}, nopSender)
		r.Peer(42001, netip.Addr{})
		r.Sessions()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		close(gate)
		t.Fatal("another client waited for one client's socket to open")
	}
	close(gate)
	wg.Wait()
	if n := counter(t, reg, "queryd_relay_sessions_opened_total", ""); n != 2 {
		t.Errorf("%v sessions opened; want 2 (one per client)", n)
	}
	if n := counter(t, reg, "queryd_relay_packets_total", "upstream"); n != 3 {
		t.Errorf("%v datagrams relayed; want 3", n)
	}
}

// Forwarding in an open session allocates nothing.
func TestRelayForwardAllocs(t *testing.T) {
	game := listenLoopback(t)
	game.SetReadBuffer(4 << 20)
	r, _ := newTestRelay(t, Config{GameServer: udpAddr(game)})
	src := netip.MustParseAddrPort("127.0.0.1:43001")
	req := []byte("\xFF\xFF\xFF\xFFgame packet")
	r.Forward(req, src, netip.Addr{}, nopSender)
	if n := testing.AllocsPerRun(1000, func() { r.Forward(req, src, netip.Addr{}, nopSender) }); n != 0 {
		t.Errorf("Forward in an open session: %v allocations; want 0", n)
	}
}

func BenchmarkRelayForward(b *testing.B) {
	game, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer game.Close()
	go func() { // drain
		buf := make([]byte, 2048)
		for {
			if _, _, err := game.ReadFromUDPAddrPort(buf); err != nil {
				return
			}
		}
	}()
	r, err := New(Config{GameServer: udpAddr(game)})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	src := netip.MustParseAddrPort("127.0.0.1:43002")
	req := []byte("\xFF\xFF\xFF\xFFgame packet")
	r.Forward(req, src, netip.Addr{}, nopSender)
	b.ReportAllocs()
	for b.Loop() {
		r.Forward(req, src, netip.Addr{}, nopSender)
	}
}

// sessionCostBound is the most a session may cost in Go memory (heap
// and goroutine stack), beside its socket in the kernel. Measured: see
// TestRelaySessionCost's log and hostile/README.md.
const sessionCostBound = 8 << 10

// TestRelaySessionCost opens sessions from many addresses and measures
// what each costs in heap and stacks with the garbage collected: a few KiB,
// not the 64 KiB receive buffer and two goroutines each once held.
func TestRelaySessionCost(t *testing.T) {
	const n = 512
	game := listenLoopback(t)
	r, _ := newTestRelay(t, Config{GameServer: udpAddr(game), MaxSessions: n})
	r.Forward([]byte("x"), netip.MustParseAddrPort("127.0.0.1:1"), netip.Addr{}, nopSender) // warm up
	before := memInUse()
	for i := 0; i < n; i++ {
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 1, byte(i >> 8), byte(i)}), 27005)
		r.Forward([]byte("x"), src, netip.Addr{}, nopSender)
	}
	if r.Sessions() != n {
		t.Fatalf("%d sessions open; want %d", r.Sessions(), n)
	}
	runtime.Gosched()
	per := (memInUse() - before) / n
	bound := int64(sessionCostBound)
	if raceBuild {
		bound *= 4 // measured 3.4 KiB plain, 6-14 KiB under the race detector
	}
	t.Logf("%d sessions: %d bytes of heap and stack each (bound %d)", n, per, bound)
	if per > bound {
		t.Errorf("a session costs %d bytes; the bound is %d", per, bound)
	}
}

// memInUse is the heap and stack memory in use after a collection.
func memInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

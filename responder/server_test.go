package responder_test

import (
	"bytes"
	"net"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
)

var infoReq = []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")

type fixture struct {
	srv   *responder.Server
	reg   *prometheus.Registry
	addr  netip.AddrPort
	a2s   *a2s.Handler
	store *state.Store
	is    *challenge.Issuer
	quiet atomic.Bool
}

// newFixture runs a responder with the real A2S handler on listen.
func newFixture(t *testing.T, listen string, lim responder.Limits) *fixture {
	return newFixtureOn(t, responder.SocketBatch, listen, lim)
}

// layers are the socket layers every behaviour test runs on.
var layers = []responder.SocketLayer{responder.SocketBatch, responder.SocketUring, responder.SocketPortable}

func newFixtureOn(t *testing.T, layer responder.SocketLayer, listen string, lim responder.Limits) *fixture {
	t.Helper()
	f := &fixture{reg: prometheus.NewRegistry()}
	is, err := challenge.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.a2s = a2s.NewHandler(a2s.Config{AppID: 480, InfoChallenge: true, GamePort: 27015}, is, nil)
	st, err := state.NewStore(map[string]any{"name": "loopback", "map": "m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Subscribe(f.a2s.Update)
	f.store, f.is = st, is
	if lim == (responder.Limits{}) {
		lim = responder.DefaultLimits
	}
	f.srv, err = responder.New(responder.Config{
		Listen:   []netip.AddrPort{netip.MustParseAddrPort(listen)},
		Socket:   layer,
		Workers:  2,
		Limits:   lim,
		Silent:   func(time.Time) bool { return f.quiet.Load() },
		Registry: f.reg,
	}, f.a2s)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Listen(); err != nil {
		t.Skipf("cannot listen on %s: %v", listen, err)
	}
	f.srv.Start()
	t.Cleanup(func() { f.srv.Close() })
	f.addr = f.srv.Addrs()[0]
	return f
}

func (f *fixture) count(t *testing.T, protocol, outcome string) float64 {
	t.Helper()
	mfs, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "queryd_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var p, o string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "protocol":
					p = l.GetValue()
				case "outcome":
					o = l.GetValue()
				}
			}
			if p == protocol && o == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// exchange sends req from c to dst and returns the reply and its source, or nil.
func exchange(t *testing.T, c *net.UDPConn, dst netip.AddrPort, req []byte, wait time.Duration) ([]byte, netip.AddrPort) {
	t.Helper()
	if _, err := c.WriteToUDPAddrPort(req, dst); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 2048)
	n, src, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		return nil, netip.AddrPort{}
	}
	return buf[:n], src
}

func clientConn(t *testing.T, laddr string) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(laddr)))
	if err != nil {
		t.Skipf("cannot bind %s: %v", laddr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Bound to the wildcard address, replies leave from the address each query
// was sent to (IP_PKTINFO), so clients that filter by source accept them.
func TestReplyFromDestinationAddress(t *testing.T) {
	for _, layer := range layers {
		t.Run(string(layer), func(t *testing.T) { testReplyFromDestination(t, layer) })
	}
}

func testReplyFromDestination(t *testing.T, layer responder.SocketLayer) {
	f := newFixtureOn(t, layer, "0.0.0.0:0", responder.Limits{})
	c := clientConn(t, "127.0.0.1:0")
	for _, ip := range []string{"127.0.0.1", "127.0.0.2", "127.3.4.5"} {
		dst := netip.AddrPortFrom(netip.MustParseAddr(ip), f.addr.Port())
		reply, src := exchange(t, c, dst, infoReq, 2*time.Second)
		if len(reply) != 9 {
			t.Fatalf("%s: reply % x", ip, reply)
		}
		if src != dst {
			t.Fatalf("query to %s answered from %s", dst, src)
		}
	}
}

func TestIPv6Loopback(t *testing.T) {
	for _, layer := range layers {
		t.Run(string(layer), func(t *testing.T) { testIPv6(t, layer) })
	}
}

func testIPv6(t *testing.T, layer responder.SocketLayer) {
	f := newFixtureOn(t, layer, "[::]:0", responder.Limits{})
	c := clientConn(t, "[::1]:0")
	dst := netip.AddrPortFrom(netip.MustParseAddr("::1"), f.addr.Port())
	reply, src := exchange(t, c, dst, infoReq, 2*time.Second)
	if len(reply) != 9 || src != dst {
		t.Fatalf("reply % x from %s", reply, src)
	}
	tok := reply[5:9]
	reply, _ = exchange(t, c, dst, append(append([]byte{}, infoReq...), tok...), 2*time.Second)
	if len(reply) < 6 || reply[4] != 'I' {
		t.Fatalf("INFO over IPv6: % x", reply)
	}
}

func TestChallengeThenAnswerAndMetrics(t *testing.T) {
	for _, layer := range layers {
		t.Run(string(layer), func(t *testing.T) { testChallengeAndMetrics(t, layer) })
	}
}

func testChallengeAndMetrics(t *testing.T, layer responder.SocketLayer) {
	f := newFixtureOn(t, layer, "127.0.0.1:0", responder.Limits{})
	c := clientConn(t, "127.0.0.1:0")
	ch, _ := exchange(t, c, f.addr, infoReq, 2*time.Second)
	info, _ := exchange(t, c, f.addr, append(append([]byte{}, infoReq...), ch[5:9]...), 2*time.Second)
	in, err := a2s.ParseInfo(info)
	if err != nil || in.Name != "loopback" {
		t.Fatalf("%+v %v", in, err)
	}
	if r, _ := exchange(t, c, f.addr, []byte("garbage!"), 200*time.Millisecond); r != nil {
		t.Fatal("garbage answered")
	}
	if r, _ := exchange(t, c, f.addr, []byte("\xFF\xFF\xFF\xFFT"), 200*time.Millisecond); r != nil {
		t.Fatal("malformed INFO answered")
	}
	for name, want := range map[[2]string]float64{
		{"a2s", "challenged"}: 1, {"a2s", "answered"}: 1, {"unknown", "unknown"}: 1, {"a2s", "malformed"}: 1,
	} {
		if got := f.count(t, name[0], name[1]); got != want {
			t.Errorf("%v = %v, want %v", name, got, want)
		}
	}
}

func TestSilentWhenStale(t *testing.T) {
	f := newFixture(t, "127.0.0.1:0", responder.Limits{})
	f.quiet.Store(true)
	c := clientConn(t, "127.0.0.1:0")
	if r, _ := exchange(t, c, f.addr, infoReq, 300*time.Millisecond); r != nil {
		t.Fatal("answered while stale")
	}
	if f.count(t, "a2s", "stale") != 1 {
		t.Fatal("stale drop not counted")
	}
	f.quiet.Store(false)
	if r, _ := exchange(t, c, f.addr, infoReq, 2*time.Second); len(r) != 9 {
		t.Fatal("not answered again once live")
	}
}

// The per-IP budget bounds the reply bytes one source draws; another source
// is unaffected.
func TestPerIPBudget(t *testing.T) {
	lim := responder.DefaultLimits
	lim.PerIPRate, lim.PerIPBurst = 1500, 1500
	f := newFixture(t, "0.0.0.0:0", lim)
	c := clientConn(t, "127.0.0.1:0")
	dst := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), f.addr.Port())
	start := time.Now()
	const sent = 400
	for i := 0; i < sent; i++ {
		c.WriteToUDPAddrPort(infoReq, dst)
	}
	got := 0
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	buf := make([]byte, 2048)
	for {
		n, _, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			break
		}
		got += n
	}
	elapsed := time.Since(start).Seconds()
	max := 1500 + int(1500*elapsed) + 9
	if got > max || got == 0 {
		t.Fatalf("%d reply bytes in %.2fs; budget allows at most %d", got, elapsed, max)
	}
	if f.count(t, "a2s", "rate_limited") == 0 {
		t.Fatal("rate-limited drops not counted")
	}
	// Another IP has its own budget.
	c2 := clientConn(t, "127.0.0.9:0")
	if r, _ := exchange(t, c2, dst, infoReq, 2*time.Second); len(r) != 9 {
		t.Fatal("another source was limited too")
	}
}

// The unproven budget bounds replies larger than their requests (here
// A2S_INFO without a challenge) to all unproven sources together; challenges,
// which cannot amplify, do not draw on it, so a flood cannot starve real
// clients of them.
func TestUnprovenBudget(t *testing.T) {
	lim := responder.DefaultLimits
	lim.UnprovenRate, lim.UnprovenBurst = 1500, 1500
	f := newFixture(t, "0.0.0.0:0", lim)
	open := a2s.NewHandler(a2s.Config{AppID: 480, InfoChallenge: false}, f.is, nil)
	f.store.Subscribe(open.Update)
	f.srv.SetHandlers(open)
	dst := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), f.addr.Port())
	flood := func(req []byte, wait time.Duration) (bytes int, replies int) {
		for i := 0; i < 50; i++ {
			c := clientConn(t, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 1, byte(i + 1)}), 0).String())
			for j := 0; j < 10; j++ {
				if r, _ := exchange(t, c, dst, req, wait); r != nil {
					bytes += len(r)
					replies++
				}
			}
		}
		return
	}
	start := time.Now()
	got, _ := flood(infoReq, 20*time.Millisecond)
	// The budget is split between the 2 receive loops, each with a burst of
	// at least one datagram (1500 bytes).
	if max := 2*1500 + int(1500*time.Since(start).Seconds()) + 200; got == 0 || got > max {
		t.Fatalf("%d open INFO bytes to 50 sources; unproven budget 1500 B/s allows %d", got, max)
	}
	// Challenges are not limited by it: every request gets one.
	f.srv.SetHandlers(f.a2s)
	if _, n := flood(infoReq, time.Second); n != 500 {
		t.Fatalf("%d of 500 challenges sent with the unproven budget spent", n)
	}
}

func TestSetHandlersAndLimits(t *testing.T) {
	f := newFixture(t, "127.0.0.1:0", responder.Limits{})
	f.srv.SetHandlers() // no protocol enabled
	c := clientConn(t, "127.0.0.1:0")
	if r, _ := exchange(t, c, f.addr, infoReq, 200*time.Millisecond); r != nil {
		t.Fatal("answered with no handlers")
	}
	f.srv.SetHandlers(f.a2s)
	if r, _ := exchange(t, c, f.addr, infoReq, 2*time.Second); !bytes.HasPrefix(r, []byte("\xFF\xFF\xFF\xFFA")) {
		t.Fatal("not answered after SetHandlers")
	}
	if err := f.srv.SetLimits(responder.Limits{}); err == nil {
		t.Fatal("zero limits accepted")
	}
}

func TestSendTo(t *testing.T) {
	f := newFixture(t, "127.0.0.1:0", responder.Limits{})
	c := clientConn(t, "127.0.0.1:0")
	dst := c.LocalAddr().(*net.UDPAddr).AddrPort()
	if err := f.srv.SendTo([]byte("heartbeat\n"), dst); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 64)
	n, src, err := c.ReadFromUDPAddrPort(buf)
	if err != nil || string(buf[:n]) != "heartbeat\n" || src != f.addr {
		t.Fatalf("%q from %s: %v", buf[:n], src, err)
	}
}

// Close returns promptly: blocked receives wake up.
func TestClosePrompt(t *testing.T) {
	for _, layer := range layers {
		f := newFixtureOn(t, layer, "127.0.0.1:0", responder.Limits{})
		start := time.Now()
		f.srv.Close()
		if d := time.Since(start); d > time.Second {
			t.Fatalf("%s: Close took %v", layer, d)
		}
	}
}

// Several sockets share one port (SO_REUSEPORT) and every one of them
// answers: sources are added (16 at least, 64 at most) until each socket's
// receive loop has served one. The kernel spreads sources over the sockets by
// a hash of their addresses; with 2 sockets, 64 sources all hashed to one has
// a chance of 2^-63.
func TestManySources(t *testing.T) {
	f := newFixture(t, "127.0.0.1:0", responder.Limits{})
	var per []uint64
	for i := 1; i <= 64; i++ {
		c := clientConn(t, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 2, byte(i)}), 0).String())
		if r, _ := exchange(t, c, f.addr, infoReq, 2*time.Second); len(r) != 9 {
			t.Fatalf("source %d not answered", i)
		}
		per = responder.DatagramsPerLoop(f.srv)
		if i >= 16 && len(per) == 2 && !slices.Contains(per, 0) {
			return
		}
	}
	t.Fatalf("datagrams served per socket after 64 sources: %v; want 2 sockets, each serving some", per)
}

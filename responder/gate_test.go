package responder_test

import (
	"encoding/binary"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
)

// tierFixture is a responder with the real A2S handler (INFO challenged)
// and the proven-source tier's gate at rate requests/s, burst burst.
type tierFixture struct {
	fixture
	mu     sync.Mutex
	proven []netip.Addr // the sources OnProven was told of, each once
}

func newTierFixture(t *testing.T, rate, burst int) *tierFixture {
	t.Helper()
	f := &tierFixture{fixture: fixture{reg: prometheus.NewRegistry()}}
	is, err := challenge.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.is = is
	f.a2s = a2s.NewHandler(a2s.Config{AppID: 480, InfoChallenge: true, GamePort: 27015}, is, nil)
	if f.store, err = state.NewStore(map[string]any{"name": "tier", "map": "m"}, nil); err != nil {
		t.Fatal(err)
	}
	f.store.Subscribe(f.a2s.Update)
	lim := responder.DefaultLimits
	lim.UnprovenPacketRate, lim.UnprovenPacketBurst = rate, burst
	f.srv, err = responder.New(responder.Config{
		Listen:  []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")},
		Socket:  responder.SocketBatch,
		Workers: 2,
		Limits:  lim,
		OnProven: func(ip netip.Addr) {
			f.mu.Lock()
			if !slices.Contains(f.proven, ip) { // told at every answer to a token: kept once, in order
				f.proven = append(f.proven, ip)
			}
			f.mu.Unlock()
		},
		Registry: f.reg,
	}, f.a2s)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Listen(); err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	f.srv.Start()
	t.Cleanup(func() { f.srv.Close() })
	f.addr = f.srv.Addrs()[0]
	return f
}

// withToken is A2S_INFO carrying tok.
func withToken(tok uint32) []byte {
	return binary.LittleEndian.AppendUint32(append([]byte{}, infoReq...), tok)
}

// flood sends n tokenless A2S_INFO requests from each of srcs (127.0.3.x
// sockets: both receive loops get some), reading nothing.
func flood(t *testing.T, srcs []*net.UDPConn, dst netip.AddrPort, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		for _, c := range srcs {
			if _, err := c.WriteToUDPAddrPort(infoReq, dst); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestProvenTierSocket: with the gate spent by a flood of tokenless
// requests from 64 sources, those requests are shed (counted
// unproven_shed, nothing sent), a new source is shed too, while a proven
// source's challenge and token queries keep being answered, and a request
// carrying a valid token is answered whoever sends it (and proves its
// source). Without the tier every request of the flood is challenged.
func TestProvenTierSocket(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood over 5 rounds of waits: -short")
	}
	f := newTierFixture(t, 2, 10) // each of the 2 loops: 1 request/s, burst 5
	client := clientConn(t, "127.0.0.1:0")
	ch, _ := exchange(t, client, f.addr, infoReq, 2*time.Second)
	if len(ch) != 9 {
		t.Fatalf("challenge before the flood: %x", ch)
	}
	tok := binary.LittleEndian.Uint32(ch[5:9])
	if r, _ := exchange(t, client, f.addr, withToken(tok), 2*time.Second); len(r) <= 9 {
		t.Fatalf("token query before the flood: %x", r)
	}
	if !f.srv.Proven(netip.MustParseAddr("127.0.0.1")) {
		t.Fatal("the client is not proven after its token query was answered")
	}
	var srcs []*net.UDPConn
	for i := 1; i <= 64; i++ {
		srcs = append(srcs, clientConn(t, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 3, byte(i)}), 0).String()))
	}
	newcomer := clientConn(t, "127.0.4.1:0")
	tokened := clientConn(t, "127.0.4.2:0")
	for round := 0; round < 5; round++ {
		flood(t, srcs, f.addr, 4) // 256 requests: the gate (5 + 1/s per loop) is spent
		if r, _ := exchange(t, client, f.addr, infoReq, 2*time.Second); len(r) != 9 {
			t.Fatalf("round %d: the proven client's challenge request not answered", round)
		}
		flood(t, srcs, f.addr, 4)
		if r, _ := exchange(t, client, f.addr, withToken(tok), 2*time.Second); len(r) <= 9 {
			t.Fatalf("round %d: the proven client's token query not answered", round)
		}
		flood(t, srcs, f.addr, 4)
		if r, _ := exchange(t, newcomer, f.addr, infoReq, 300*time.Millisecond); r != nil {
			t.Fatalf("round %d: a new source was answered during the flood: %x", round, r)
		}
	}
	flood(t, srcs, f.addr, 4)
	other := f.is.Token(netip.MustParseAddr("127.0.4.2"))
	if r, _ := exchange(t, tokened, f.addr, withToken(other), 2*time.Second); len(r) <= 9 {
		t.Fatalf("a query with a valid token from an unproven source was not answered: %x", r)
	}
	sent := 5 * 3 * 256
	shed := f.count(t, "a2s", "unproven_shed")
	challenged := f.count(t, "a2s", "challenged")
	t.Logf("flood of %d: %v shed, %v challenged (the proven client's 6 included)", sent+256, shed, challenged)
	if shed < float64(sent)*0.9 {
		t.Fatalf("%v of %d flood requests shed", shed, sent+256)
	}
	if challenged > 6+2*5+2*5 { // the client's, the bursts, a refill over the test's seconds
		t.Fatalf("%v challenged during the flood", challenged)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.proven) != 2 || f.proven[0] != netip.MustParseAddr("127.0.0.1") || f.proven[1] != netip.MustParseAddr("127.0.4.2") {
		t.Fatalf("OnProven told of %v, want 127.0.0.1 then 127.0.4.2", f.proven)
	}
}

// TestProvenTierOff: unproven_packet_rate 0 is no gate: the same flood is
// challenged whole, nothing shed.
func TestProvenTierOff(t *testing.T) {
	f := newTierFixture(t, 0, 0)
	var srcs []*net.UDPConn
	for i := 1; i <= 16; i++ {
		srcs = append(srcs, clientConn(t, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 3, byte(i)}), 0).String()))
	}
	flood(t, srcs, f.addr, 8)
	deadline := time.Now().Add(5 * time.Second)
	for f.count(t, "a2s", "challenged") < 128 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if c, s := f.count(t, "a2s", "challenged"), f.count(t, "a2s", "unproven_shed"); c != 128 || s != 0 {
		t.Fatalf("no gate: %v challenged, %v shed; want 128, 0", c, s)
	}
}

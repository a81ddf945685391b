//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/queryd/queryd/protocols"
	"github.com/queryd/queryd/responder"
)

// joinLog collects what OnJoin's function is called with.
type joinLog struct {
	mu  sync.Mutex
	got [][2]netip.AddrPort
}

func (l *joinLog) add(game, src netip.AddrPort) {
	l.mu.Lock()
	l.got = append(l.got, [2]netip.AddrPort{game, src})
	l.mu.Unlock()
}

// since are the reports after the first n.
func (l *joinLog) since(n int) [][2]netip.AddrPort {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][2]netip.AddrPort(nil), l.got[n:]...)
}

func (l *joinLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got)
}

// TestDivertJoin (issue 41, divert mode): while a server rests
// (Divert.Rest(true)) a game datagram to one of its divert addresses is
// reported to OnJoin's function with that address and its source, over
// IPv4 and IPv6; every protocol's query (each module's probe, every
// protocol on, one every 15 ms: past the rate limit, so that one reported
// would show) is not; nothing is reported while it is awake, before or
// after the rest; a burst of game datagrams from one client is reported
// at most once per 10 ms (plus one), and every one of them is counted as
// reported, rate-limited or ring-full.
func TestDivertJoin(t *testing.T) {
	t.Parallel() // namespaces of its own; it mostly waits for replies
	fx := newFixture(t, responder.Limits{})
	game4, game6 := netip.AddrPortFrom(srvAddr4, testPort), netip.AddrPortFrom(srvAddr6, testPort)
	dv, err := fx.divert(testServer, []DivertAddr{{Game: game4, Hidden: testPort}, {Game: game6, Hidden: testPort}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dv.Close() })
	var log joinLog
	dv.OnJoin(log.add)
	c4, c6 := fx.dial(t, cliAddr4, srvAddr4), fx.dial(t, cliAddr6, srvAddr6)
	for _, c := range []*client{c4, c6} { // the neighbours known
		if c.ask(t, a2sInfo, time.Second) == nil {
			t.Fatalf("no answer to A2S_INFO from %v", c.c.LocalAddr())
		}
	}
	getchallenge := []byte("\xFF\xFF\xFF\xFFgetchallenge")
	src4, src6 := c4.c.LocalAddr().(interface{ AddrPort() netip.AddrPort }), c6.c.LocalAddr().(interface{ AddrPort() netip.AddrPort })
	send := func(c *client, b []byte) {
		t.Helper()
		if _, err := c.c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	quiet := func(what string, n int) {
		t.Helper()
		time.Sleep(300 * time.Millisecond)
		if got := log.since(n); len(got) != 0 {
			t.Fatalf("%s: reported %v, want nothing", what, got)
		}
	}
	waitJoin := func(what string, n int, game, src netip.AddrPort) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Second); log.len() == n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not reported within 2 s", what)
			}
		}
		time.Sleep(50 * time.Millisecond)
		if got := log.since(n); len(got) != 1 || got[0] != [2]netip.AddrPort{game, src} {
			t.Fatalf("%s: reported %v, want once (%v from %v)", what, got, game, src)
		}
	}

	send(c4, getchallenge)
	send(c6, getchallenge)
	quiet("game datagrams while awake", 0)

	if err := dv.Rest(true); err != nil {
		t.Fatal(err)
	}
	queries := 0
	for _, m := range protocols.List() {
		for _, c := range []*client{c4, c6} {
			send(c, m.Probe().Request)
			queries++
			time.Sleep(15 * time.Millisecond)
		}
	}
	for _, q := range [][]byte{[]byte("\xFF\xFF\xFF\xFFgetstatus"), a2sInfo} {
		send(c4, q)
		queries++
		time.Sleep(15 * time.Millisecond)
	}
	quiet("every protocol's query while resting", 0)
	if j, err := dv.Joins(); err != nil || j != (JoinCounts{}) {
		t.Fatalf("queries while resting: join counts %+v (%v), want none", j, err)
	}
	t.Logf("%d queries of every protocol to a resting server: 0 reports", queries)

	send(c4, getchallenge)
	waitJoin("getchallenge over IPv4 while resting", 0, game4, src4.AddrPort())
	time.Sleep(15 * time.Millisecond)
	send(c6, getchallenge)
	waitJoin("getchallenge over IPv6 while resting", 1, game6, src6.AddrPort())

	// A burst: as fast as one socket sends, for 200 ms at most.
	time.Sleep(15 * time.Millisecond)
	before, _ := dv.Joins()
	n0 := log.len()
	start := time.Now()
	sent := 0
	for ; sent < 20000 && time.Since(start) < 200*time.Millisecond; sent++ {
		send(c4, getchallenge)
	}
	took := time.Since(start)
	time.Sleep(300 * time.Millisecond)
	after, _ := dv.Joins()
	reports := log.len() - n0
	limit := int(took/(10*time.Millisecond)) + 1
	t.Logf("a burst of %d game datagrams in %s: %d reported, %d rate-limited, %d ring full (at most %d allowed)",
		sent, took.Round(time.Millisecond), after.Reported-before.Reported, after.Limited-before.Limited, after.RingFull-before.RingFull, limit)
	if reports < 1 || reports > limit || uint64(reports) != after.Reported-before.Reported {
		t.Fatalf("a burst of %d in %s: %d reports (counted %d), want 1 to %d", sent, took, reports, after.Reported-before.Reported, limit)
	}
	if got := after.Reported + after.Limited + after.RingFull - before.Reported - before.Limited - before.RingFull; got != uint64(sent) {
		t.Fatalf("a burst of %d: %d counted", sent, got)
	}

	if err := dv.Rest(false); err != nil {
		t.Fatal(err)
	}
	n := log.len()
	time.Sleep(15 * time.Millisecond)
	send(c4, getchallenge)
	send(c6, getchallenge)
	quiet("game datagrams once awake again", n)
}

package hostile

import (
	"net/netip"
	"sync"
	"testing"
	"time"
)

// TestRelayLoadingPlayerKeepsPort is the loading player: with
// max_sessions = 32, a player joins and sends 10 game packets (answered:
// two-way game traffic), goes quiet for 2 s (a map load) while 64 spoofed
// one-packet sessions arrive, then plays again. Before, it came back from a
// new source port (evicted: to the game server a new, unknown client); it
// must keep its session, and the spoofed sessions take each other's place.
func TestRelayLoadingPlayerKeepsPort(t *testing.T) {
	t.Parallel() // a daemon of its own; it waits on timers and slow clients, not the CPU
	if why := rawSupported(); why != "" {
		t.Skip("skipped: " + why)
	}
	ns := relayNS(t)
	game := startHandshakeGame(t, ns)
	d := startNSRelay(t, ns, game, map[string]any{"max_sessions": 32})
	pub := netip.MustParseAddrPort(d.UDPAddr)
	p := newGamePlayer(t, ns, "127.0.0.10", pub)
	if err := p.join(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := p.play(10, 50*time.Millisecond); got < 9 {
		t.Fatalf("%d of 10 game packets answered before the map load", got)
	}
	before := d.Metrics(t)
	var raw *rawSender
	if err := inNS(ns, func() (err error) { raw, err = newRawSender(pub); return err }); err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	loadStart := time.Now()
	pace := newPacer(64 / 1.5) // 64 one-packet sessions over 1.5 s of the 2 s load
	for i := range 64 {
		pace.Wait(i)
		if err := raw.Send(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, byte(100 + i), 0, 1}), 27005), relayPacket); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(loadStart.Add(2 * time.Second)))
	got := p.play(10, 50*time.Millisecond)
	delta := d.Metrics(t).Sub(before)
	relayFigures(t, delta)
	addrs := p.addresses()
	t.Logf("after a 2 s map load under 64 spoofed one-packet sessions: %d of 10 game packets answered; the game server saw the player at %v",
		got, addrs)
	if full := delta.Sum("queryd_relay_dropped_total", "reason", "sessions_full"); delta.Sum("queryd_relay_sessions_opened_total")+full < 64 || full == 0 {
		t.Errorf("%.0f sessions opened, %.0f dropped as sessions_full: the relay was not full, the test proves nothing",
			delta.Sum("queryd_relay_sessions_opened_total"), full)
	}
	if len(addrs) != 1 || got < 9 {
		t.Errorf("the loading player was seen at %v (%d of 10 answered after the load); want its one session kept", addrs, got)
	}
}

// TestRelaySpoofedFlood65536 floods the relay with relayPacket from 65,536
// spoofed IPv4 sources (nearly each in a /24 of its own), each sending twice 0.3 s apart (warm: it comes
// back), 5,000 datagrams a second for 26 s, while 4 proven players play
// and 10 new players join. Scaled to max_sessions = 1,024 (a reserve of
// 256, 768 fresh sessions: the race-built daemon opens a session's socket
// in about 0.75 ms, 10 times the plain build's cost). The new players must
// join (handshake and a game packet within 10 s each, retrying every
// 250 ms: under the flood a newcomer gets a session when the oldest fresh
// one is past freshHold, 1 s, so 768 a second for the flood and the
// players together), the proven players keep their sessions and
// 90 % of their packets answered, and the daemon's RSS stays within
// relayRSSBound.
func TestRelaySpoofedFlood65536(t *testing.T) {
	if why := rawSupported(); why != "" {
		t.Skip("skipped: " + why)
	}
	const sources, rate, block = 65536, 5000.0, 1500 // a block is 0.3 s of the flood, sent twice
	ns := relayNS(t)
	game := startHandshakeGame(t, ns)
	d := startNSRelay(t, ns, game, map[string]any{"max_sessions": 1024, "max_sessions_per_ip": nil})
	pub := netip.MustParseAddrPort(d.UDPAddr)
	proven := joinPlayers(t, ns, pub, 4, 10, 3*time.Second)
	for _, p := range proven {
		if p != nil {
			p.play(30, 50*time.Millisecond)
		}
	}
	stopPlay := make(chan struct{})
	var wg sync.WaitGroup
	for _, p := range proven {
		if p == nil {
			continue
		}
		p.sent.Store(0)
		p.got.Store(0)
		wg.Add(1)
		go func() { defer wg.Done(); p.playUntil(stopPlay) }()
	}
	rssBase, _ := d.RSS(t)
	before := d.Metrics(t)
	var raw *rawSender
	if err := inNS(ns, func() (err error) { raw, err = newRawSender(pub); return err }); err != nil {
		t.Fatal(err)
	}
	seq := make([]netip.AddrPort, 0, 2*sources)
	for b := 0; b < sources; b += block {
		for range 2 {
			for i := b; i < min(b+block, sources); i++ {
				seq = append(seq, netip.AddrPortFrom(spoofedSource(i), 27005))
			}
		}
	}
	start := time.Now()
	stop := rawLoop(t, raw, seq, rate, 300*time.Millisecond)
	var during Metrics
	waitFor(5*time.Second, func() bool { // until the fresh sessions are full
		during = d.Metrics(t)
		return during.Sum("queryd_relay_sessions") >= 768
	})
	newcomers := joinPlayers(t, ns, pub, 10, 20, 10*time.Second)
	time.Sleep(time.Until(start.Add(time.Duration(float64(len(seq)) / rate * float64(time.Second)))))
	sent := stop()
	close(stopPlay)
	wg.Wait()
	rss, peak := d.RSS(t)
	delta := d.Metrics(t).Sub(before)

	t.Logf("attack: %s from %d sources", sent, sources)
	t.Logf("when the new players came: %.0f relay sessions open, %.0f proven", during.Sum("queryd_relay_sessions"), during.Sum("queryd_relay_sessions_proven"))
	relayFigures(t, delta)
	joined, slowest := 0, time.Duration(0)
	for _, p := range newcomers {
		if p != nil {
			joined++
			slowest = max(slowest, p.joined)
		}
	}
	t.Logf("new players joined: %d/10 (slowest %v)", joined, slowest.Round(time.Millisecond))
	t.Logf("RSS: %.1f MiB before, %.1f MiB after, peak %.1f MiB (growth %.1f MiB; bound %.0f MiB)",
		mib(rssBase), mib(rss), mib(peak), mib(peak-rssBase), mib(relayRSSBound()))
	if during.Sum("queryd_relay_sessions") < 768 {
		t.Errorf("the flood did not fill the 768 sessions not yet proven (%.0f open): the test proves nothing", during.Sum("queryd_relay_sessions"))
	}
	if joined != 10 {
		t.Errorf("%d of 10 new players joined during the flood; want 10", joined)
	}
	if peak-rssBase > relayRSSBound() {
		t.Errorf("RSS grew by %.1f MiB during the flood; the bound is %.0f MiB", mib(peak-rssBase), mib(relayRSSBound()))
	}
	checkProvenKept(t, proven)
}

// spoofedSource is the flood's i-th source: each of 65,536 in a /24 of its
// own but for a few (127.1.0.1 to 127.254.255.1, not 127.0/16 where the
// players are): the site caps do not help, only the reserve and freshHold.
func spoofedSource(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{127, byte(1 + (i>>8)%254), byte(i), 1})
}

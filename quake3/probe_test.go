package quake3_test

import (
	"bytes"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/quake3"
)

// fakeGame is a stock Quake 3 server on loopback that never feeds queryd:
// it answers getinfo and getstatus (echoing the challenge) while answering
// is set, and drops everything while it is not.
type fakeGame struct {
	conn      *net.UDPConn
	answering atomic.Bool
	asked     atomic.Int64 // getinfo received, answered or not
}

func newFakeGame(t *testing.T) *fakeGame {
	t.Helper()
	g := &fakeGame{conn: udpLoopback(t)}
	g.answering.Store(true)
	go func() {
		buf := make([]byte, 65535)
		for {
			n, src, err := g.conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if reply := g.answer(buf[:n]); reply != "" {
				g.conn.WriteToUDPAddrPort([]byte(reply), src)
			}
		}
	}()
	return g
}

// answer returns the reply to req ("" for none).
func (g *fakeGame) answer(req []byte) string {
	cmd, ok := bytes.CutPrefix(req, []byte(q3hdr))
	if !ok {
		return ""
	}
	f := strings.Fields(string(cmd))
	if len(f) == 0 {
		return ""
	}
	ch := ""
	if len(f) > 1 {
		ch = `\challenge\` + f[1]
	}
	switch strings.ToLower(f[0]) {
	case "getinfo":
		g.asked.Add(1)
		if g.answering.Load() {
			return q3hdr + "infoResponse\n" + ch + `\hostname\stock server\mapname\q3dm17\clients\0\sv_maxclients\8\protocol\68\gamename\baseq3`
		}
	case "getstatus":
		if g.answering.Load() {
			return q3hdr + "statusResponse\n" + ch + `\sv_hostname\stock server\mapname\q3dm17` + "\n" + `3 40 "Sarge"` + "\n"
		}
	}
	return ""
}

func (g *fakeGame) addr() string { return g.conn.LocalAddr().String() }

// waitMetric waits up to 5 s for the counter name{label} to reach want.
func waitMetric(t *testing.T, d interface {
	Metric(testing.TB, string, string) float64
}, name, label string, want float64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); d.Metric(t, name, label) < want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s{%s} = %v after 5 s, want %v", name, label, d.Metric(t, name, label), want)
		}
	}
}

// Relay mode with [quake3] off, in front of a stock game server that never
// feeds queryd: the heartbeats probe the game server with getinfo. It
// answers: a heartbeat, and the master's getinfo is relayed to the game
// server, whose infoResponse comes back from the public port. It stops
// answering: a flatline, and no heartbeat while it is down, even when one
// is due. It answers again: a heartbeat. Stop: a flatline.
func TestQuake3RelayProbesUpstream(t *testing.T) {
	quake3.SetProbeTiming(t, 2, 100*time.Millisecond, 200*time.Millisecond)
	game := newFakeGame(t)
	master := udpLoopback(t)
	d := startStaleAfter(t, "60s", `
[quake3]
enabled = false
[relay]
upstream = "`+game.addr()+`"
[[quake3.masters]]
address = "`+master.LocalAddr().String()+`"
heartbeat = "EnemyTerritory-1"
flatline = "ETFlatline-1"
`)
	public := d.UDP()
	heartbeat, flatline := q3hdr+"heartbeat EnemyTerritory-1\n", q3hdr+"heartbeat ETFlatline-1\n"

	msg, from := readFrom(t, master)
	if string(msg) != heartbeat || from != public {
		t.Fatalf("got %q from %s, want the heartbeat from the public %s", msg, from, public)
	}
	if n := d.Metric(t, "queryd_quake3_upstream_probes_total", "answered"); n < 1 {
		t.Errorf("the heartbeat went out with %v answered probes", n)
	}
	master.WriteToUDPAddrPort([]byte(q3hdr+"getinfo m4st3r"), public)
	reply, from := readFrom(t, master)
	inf, err := quake3.ParseInfoResponse(reply)
	if err != nil || from != public || inf.Get("challenge") != "m4st3r" || inf.Get("hostname") != "stock server" {
		t.Fatalf("the master's getinfo: %q from %s (%v), want the game server's infoResponse from %s", reply, from, err, public)
	}

	game.answering.Store(false)
	if msg, _ := readFrom(t, master); string(msg) != flatline {
		t.Fatalf("the game server stopped answering: %q, want the flatline", msg)
	}
	// A player joins (a heartbeat is due at once): no heartbeat while the
	// game server is down. Two probes after the feed's change have failed,
	// so the heartbeat would have gone out by then.
	silent := d.Metric(t, "queryd_quake3_upstream_probes_total", "silent")
	if _, err := d.Feed(t).Patch(map[string]any{"players": map[string]any{"1": map[string]any{"name": "p"}}}); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, d, "queryd_quake3_upstream_probes_total", "silent", silent+2)
	master.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, _, err := master.ReadFromUDPAddrPort(make([]byte, 512)); err == nil {
		t.Fatalf("a datagram of %d bytes reached the master while the game server was down", n)
	}

	game.answering.Store(true)
	if msg, _ := readFrom(t, master); string(msg) != heartbeat {
		t.Fatalf("the game server answers again: %q, want a heartbeat", msg)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if msg, _ := readFrom(t, master); string(msg) != flatline {
		t.Fatalf("on stop: %q, want the flatline", msg)
	}
	if n := d.Metric(t, "queryd_quake3_heartbeats_total", "heartbeat"); n != 2 {
		t.Errorf("%v heartbeats counted, want 2", n)
	}
}

// A game server that never answers: no heartbeat at start, none at stop
// (the masters were never told it is up), and stopping queryd while a probe
// waits (3 attempts of 3 s) is prompt.
func TestQuake3RelayProbeSilentUpstream(t *testing.T) {
	game := newFakeGame(t)
	game.answering.Store(false)
	master := udpLoopback(t)
	d := startStaleAfter(t, "60s", `
[quake3]
enabled = false
[relay]
upstream = "`+game.addr()+`"
[[quake3.masters]]
address = "`+master.LocalAddr().String()+`"
heartbeat = "EnemyTerritory-1"
flatline = "ETFlatline-1"
`)
	for deadline := time.Now().Add(5 * time.Second); game.asked.Load() < 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the game server was not probed within 5 s")
		}
	}
	start := time.Now()
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("stopping took %v while a probe waited; want it prompt", took)
	}
	master.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, _, err := master.ReadFromUDPAddrPort(make([]byte, 512)); err == nil {
		t.Fatalf("the master got a datagram of %d bytes from a server that never was up", n)
	}
	if n := d.Metric(t, "queryd_quake3_heartbeats_total", "heartbeat") + d.Metric(t, "queryd_quake3_heartbeats_total", "flatline"); n != 0 {
		t.Errorf("%v heartbeats and flatlines counted, want none", n)
	}
}

package hostile

import (
	"crypto/rand"

	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/internal/netnstest"
)

// The forged A2S_INFO of issue 23's injection run: another name and map,
// 99 of 100 players, another game port.
var forgedInfo = append([]byte("\xFF\xFF\xFF\xFFI\x11INJECTED BY OFF-PATH SPOOFER\x00forged_map\x00tf\x00Team Fortress\x00\xb8\x01"),
	99, 100, 0, 'd', 'l', 0, 0, '1', 0, 0x80, 0x39, 0x05)

// spoofPorts is the range a blind spoofer sprays: Linux's default
// ephemeral ports (net.ipv4.ip_local_port_range), where every poll's
// socket is.
const spoofLow, spoofHigh = 32768, 60999

// TestUpstreamSpoofedAnswers is issue 23's injection run against the
// running daemons: a stock A2S server (a queryd answering A2S only) in the
// test network's server namespace, and a front queryd polling it every
// 200 ms from the client namespace. From the server's namespace a raw
// socket sprays the front's whole ephemeral port range with A2S_INFO
// datagrams whose source is the game server's address and port, forged
// ones and then junk, several passes over every port. No query of the
// front ever shows the forged state, the front's state stays the game
// server's, and its polls keep being answered throughout.
func TestUpstreamSpoofedAnswers(t *testing.T) {
	t.Parallel() // its own namespace; it waits for polls
	if why := rawSupported(); why != "" {
		t.Skip(why)
	}
	n := netnstest.New(t)
	game := netip.AddrPortFrom(netnstest.ServerAddr4, 27115)
	back := newDaemon(t, nil)
	back.Netns, back.UDPAddr = n.ServerNS, game.String()
	back.WriteConfig(t, baseTables(), Tables{"server": {"name": "the real server", "map": "real_map"},
		"gamespy4": {"enabled": false}, "sagl": {"enabled": false}, "quake3": {"enabled": false},
		"bedrock": {"enabled": false}, "sqp": {"enabled": false}})
	back.Start(t)
	front := newDaemon(t, nil)
	front.Netns = n.ClientNS
	front.WriteConfig(t, baseTables(), Tables{"upstream": {"protocol": "a2s", "address": game.String(), "interval": "200ms", "timeout": "1s"}})
	front.Start(t)
	ask := func() (*a2s.Info, error) {
		var info *a2s.Info
		err := netnstest.Do(n.ClientNS, func() error {
			c, err := a2s.Dial(front.UDPAddr)
			if err != nil {
				return err
			}
			defer c.Close()
			c.Timeout = time.Second
			info, err = c.Info()
			return err
		})
		return info, err
	}
	waitInfo := func(what string, ok func(*a2s.Info) bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if info, err := ask(); err == nil && ok(info) {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("%s: not within 15 s (last %+v, %v)\n%s", what, info, err, front.Output())
			}
		}
	}
	waitInfo("the front serves the game server's state", func(i *a2s.Info) bool { return i.Name == "the real server" })

	var raw *rawSender
	if err := netnstest.Do(n.ServerNS, func() (err error) {
		raw, err = newNetRawSender(netip.AddrPortFrom(netnstest.ClientAddr4, spoofLow))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	junk := make([]byte, 1400)
	rand.Read(junk)
	copy(junk, "\xFF\xFF\xFF\xFFI") // an INFO header, then noise
	for _, phase := range []struct {
		name    string
		payload []byte
	}{{"forged A2S_INFO", forgedInfo}, {"junk", junk}, {"forged A2S_INFO again", forgedInfo}} {
		answered := front.Metrics(t).Sum("queryd_upstream_polls_total", "outcome", "answered")
		start, sent, asked := time.Now(), 0, 0
		for pass := 0; pass < 3 || time.Since(start) < 2*time.Second; pass++ {
			if time.Since(start) > 20*time.Second {
				break
			}
			for port := spoofLow; port <= spoofHigh; port++ {
				raw.dst = netip.AddrPortFrom(netnstest.ClientAddr4, uint16(port))
				if err := raw.Send(game, phase.payload); err != nil {
					t.Fatal(err)
				}
				sent++
				if port%4096 == 0 {
					asked++
					if info, err := ask(); err == nil && (strings.Contains(info.Name, "INJECTED") || info.Map != "real_map" || info.Players == 99) {
						t.Fatalf("%s: the front serves a forged state: %+v", phase.name, info)
					}
				}
			}
		}
		polls := front.Metrics(t).Sum("queryd_upstream_polls_total", "outcome", "answered") - answered
		t.Logf("%s: %d datagrams over %d ports in %v, %d queries of the front, %v polls answered meanwhile",
			phase.name, sent, spoofHigh-spoofLow+1, time.Since(start).Round(time.Millisecond), asked, polls)
		if polls < 2 {
			t.Errorf("%s: %v polls answered while it was sprayed: want polls to keep succeeding\n%s", phase.name, polls, front.Output())
		}
	}
	waitInfo("the front still serves the game server's state", func(i *a2s.Info) bool {
		return i.Name == "the real server" && i.Map == "real_map" && i.Players == 2
	})
	if s := front.Metrics(t).Sum("queryd_upstream_stale"); s != 0 {
		t.Errorf("queryd_upstream_stale = %v after the spray", s)
	}
}

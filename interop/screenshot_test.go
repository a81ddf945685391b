package interop

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/quake3"
)

// TestScreenshot takes README's picture of the page (docs/status.png) when
// QUERYD_SCREENSHOT names the file to write:
//
//	cd interop && QUERYD_SCREENSHOT=/tmp/status.png go test -run TestScreenshot .
//	pngquant --quality 70-90 --output docs/status.png /tmp/status.png  # 150 KB to 45 KB
//
// A daemon with three protocols, relay mode in front of a loopback echo
// "game server", and heartbeats to a loopback "master" is fed a state and
// loaded by the bench generator for a few seconds.
func TestScreenshot(t *testing.T) {
	out := os.Getenv("QUERYD_SCREENSHOT")
	if out == "" {
		t.Skip("set QUERYD_SCREENSHOT=FILE.png to take the README's screenshot")
	}
	game := loopbackUDP(t)
	go echo(game)
	master := loopbackUDP(t)
	d := daemontest.Start(t, []daemon.Module{a2s.Module{}, gamespy4.Module{}, quake3.Module{}}, `
[relay]
upstream = "`+game.LocalAddr().String()+`"
[[quake3.masters]]
address = "`+master.LocalAddr().String()+`"
heartbeat = "DarkPlaces"
`)
	fc := d.Feed(t)
	if _, err := fc.Replace(map[string]any{
		"name": "Example RP | EU #1", "map": "Los Santos", "game": "Example Game", "version": "0.2.0", "max_players": 50,
		"players": map[string]any{
			"0": map[string]any{"name": "Thomas", "score": 12, "ping": 31, "time": 1830},
			"3": map[string]any{"name": "Zoë", "score": 9, "ping": 58, "time": 912},
			"4": map[string]any{"name": "<script>alert(1)</script>", "score": 4, "ping": 44, "time": 301},
			"7": map[string]any{"name": "Ωμέγα x<y>&z", "score": 2, "ping": 120, "time": 65},
		},
	}); err != nil {
		t.Fatal(err)
	}
	go func() { // the master asks for the info the heartbeat announced
		buf := make([]byte, 1500)
		if _, _, err := master.ReadFromUDPAddrPort(buf); err == nil {
			master.WriteToUDPAddrPort([]byte("\xff\xff\xff\xffgetinfo m4st3r"), d.UDP())
		}
	}()
	relayed := loopbackUDP(t)
	p := openPage(t, d)
	time.Sleep(3 * time.Second) // quiet at first
	waits := []func(){startLoad(t, d, "a2s_info", 4, 12*time.Second, 200000)}
	time.Sleep(3 * time.Second)
	waits = append(waits, startLoad(t, d, "gs4_full", 2, 6*time.Second, 50000))
	time.Sleep(2 * time.Second)
	waits = append(waits, startLoad(t, d, "q3_status", 1, 3*time.Second, 20000))
	for i := 0; i < 100; i++ { // a client of the game server, through the relay
		relayed.WriteToUDPAddrPort([]byte("game packet"), d.UDP())
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // a2s still loaded, the others done
	p.run(t, 10*time.Second, chromedp.EmulateViewport(1280, 900))
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range waits {
		w()
	}
	t.Logf("wrote %s (%d bytes)", out, len(png))
}

func loopbackUDP(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// echo sends every datagram back until c closes.
func echo(c *net.UDPConn) {
	buf := make([]byte, 2048)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		c.WriteToUDPAddrPort(buf[:n], from)
	}
}

package quake3_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/quake3"
)

const q3hdr = "\xff\xff\xff\xff"

// mods is the test daemons' one module.
var mods = []daemon.Module{quake3.Module{}}

func udpLoopback(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readFrom waits up to 5 s for a datagram on c.
func readFrom(t *testing.T, c *net.UDPConn) ([]byte, netip.AddrPort) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 65535)
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("nothing arrived: %v", err)
	}
	return buf[:n], from
}

// startStaleAfter runs a daemon on daemontest.Base with [feed] stale_after
// set to after, plus extra.
func startStaleAfter(t *testing.T, after, extra string) *daemontest.Daemon {
	t.Helper()
	path := daemontest.WriteConfig(t, daemontest.Dir(t), extra)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(b), `stale_after = "60s"`, `stale_after = "`+after+`"`, 1)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := daemontest.StartFile(t, mods, path)
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("the daemon stopped with an error: %v", err)
		}
	})
	return d
}

// TestQuake3QueryLoopback: the module's query (what `queryd query -proto
// quake3` prints) against the real responder, and its summary row.
func TestQuake3QueryLoopback(t *testing.T) {
	d := daemontest.Start(t, mods, `
[server.players.1]
name = "Ali\\ce;"
score = 9
ping = 40
[quake3]
gamename = "mygame"
protocol = 71
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ans, err := quake3.Module{}.Query(ctx, d.UDP().String(), module.QueryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := ans.Full.(map[string]any)
	info, status := m["info"].(map[string]string), m["status"].(map[string]string)
	players := m["players"].([]quake3.PlayerLine)
	if info["hostname"] != "config name" || info["mapname"] != "config_map" || info["gamename"] != "mygame" ||
		info["protocol"] != "71" || info["clients"] != "1" || info["sv_maxclients"] != "10" {
		t.Errorf("info %v", info)
	}
	if status["sv_hostname"] != "config name" || len(players) != 1 || players[0] != (quake3.PlayerLine{Score: 9, Ping: 40, Name: "Ali/ce:"}) {
		t.Errorf("status %v players %+v", status, players)
	}
	s := ans.Summary
	if s.Name != "config name" || s.Map != "config_map" || s.Players == nil || *s.Players != 1 || s.MaxPlayers == nil || *s.MaxPlayers != 10 {
		t.Errorf("summary %+v", s)
	}

	// The JSON is what `queryd query -proto quake3` printed before the
	// module owned its query, but for the random challenges.
	if info["challenge"] == "" || status["challenge"] == "" {
		t.Errorf("no challenge echoed: info %v status %v", info, status)
	}
	delete(info, "challenge")
	delete(status, "challenge")
	got, err := json.Marshal(ans.Full)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"info":{"clients":"1","g_humanplayers":"1","g_needpass":"0","gamename":"mygame","gametype":"0",` +
		`"hostname":"config name","mapname":"config_map","protocol":"71","sv_maxclients":"10"},` +
		`"players":[{"score":9,"ping":40,"name":"Ali/ce:"}],` +
		`"status":{"g_gametype":"0","g_needpass":"0","gamename":"mygame","mapname":"config_map","protocol":"71",` +
		`"sv_hostname":"config name","sv_maxclients":"10"}}`
	if string(got) != want {
		t.Errorf("query JSON\n%s\nwant\n%s", got, want)
	}
}

// A fake master on loopback: the heartbeat arrives from queryd's public
// socket, the master's getinfo challenge is answered with the keys dpmaster
// requires, a player joining heartbeats at once, and stopping flatlines.
func TestQuake3MasterHeartbeats(t *testing.T) {
	master := udpLoopback(t)
	d := daemontest.Start(t, mods, `
[quake3]
gamename = "mygame"
query_port_is_join_port = true
[[quake3.masters]]
address = "`+master.LocalAddr().String()+`"
heartbeat = "DarkPlaces"
flatline = "ETFlatline-1"
[[quake3.masters]]
address = "[::1]:27950"
heartbeat = "QuakeArena-1"
`)
	public := d.UDP()

	msg, from := readFrom(t, master)
	if string(msg) != q3hdr+"heartbeat DarkPlaces\n" || from != public {
		t.Fatalf("got %q from %s, want the heartbeat from the public %s", msg, from, public)
	}
	if _, err := master.WriteToUDPAddrPort([]byte(q3hdr+"getinfo A_ch4Lleng3"), from); err != nil {
		t.Fatal(err)
	}
	reply, _ := readFrom(t, master)
	inf, err := quake3.ParseInfoResponse(reply)
	if err != nil {
		t.Fatalf("%q: %v", reply, err)
	}
	if inf.Get("challenge") != "A_ch4Lleng3" || inf.Get("protocol") != "68" || inf.Get("clients") != "0" ||
		inf.Get("sv_maxclients") != "10" || inf.Get("gamename") != "mygame" || inf.Keys[len(inf.Keys)-1] != "challenge" {
		t.Errorf("infoResponse %v", inf.Values)
	}
	if n := d.Metric(t, "queryd_quake3_master_getinfo_total", ""); n != 1 {
		t.Errorf("master getinfo counted %v, want 1", n)
	}
	// The status page's heartbeats card reads the metrics this module names
	// (HeartbeatMetrics), sampled once a second.
	heartbeatsCard(t, d.AdminAddr(), 1, 1)

	// A reload makes a new handler: the master's next getinfo is counted
	// too, without waiting for the next heartbeat.
	d.Reload()
	time.Sleep(300 * time.Millisecond) // the heartbeats' next poll (250 ms) hands the watch over
	if _, err := master.WriteToUDPAddrPort([]byte(q3hdr+"getinfo after_reload"), from); err != nil {
		t.Fatal(err)
	}
	readFrom(t, master)
	if n := d.Metric(t, "queryd_quake3_master_getinfo_total", ""); n != 2 {
		t.Errorf("master getinfo counted %v after a reload, want 2", n)
	}

	// Empty -> non-empty: a heartbeat at once.
	if _, err := d.Feed(t).Patch(map[string]any{"players": map[string]any{"1": map[string]any{"name": "p"}}}); err != nil {
		t.Fatal(err)
	}
	if msg, _ := readFrom(t, master); string(msg) != q3hdr+"heartbeat DarkPlaces\n" {
		t.Fatalf("after a player joined: %q", msg)
	}

	if err := d.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if msg, _ := readFrom(t, master); string(msg) != q3hdr+"heartbeat ETFlatline-1\n" {
		t.Fatalf("on stop: %q, want the flatline", msg)
	}
	if n := d.Metric(t, "queryd_quake3_heartbeats_total", "heartbeat"); n != 2 {
		t.Errorf("%v heartbeats counted, want 2", n)
	}
	if n := d.Metric(t, "queryd_quake3_heartbeat_errors_total", ""); n < 1 {
		t.Errorf("the IPv6 master (no IPv6 socket to send from) was not counted as an error")
	}
}

// heartbeatsCard polls admin's /status.json (at most 5 s) until its
// heartbeats card has counted getinfo master queries and heartbeats sent,
// and returns the card. It polls for both: the card is a sample of the
// metrics taken once a second, and one sample may hold a getinfo the
// heartbeat before it brought and not yet that heartbeat (the registry
// reads its collectors concurrently).
func heartbeatsCard(t *testing.T, admin string, getinfo, heartbeats float64) map[string]any {
	t.Helper()
	var card map[string]any
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		res, err := http.Get("http://" + admin + "/status.json")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Heartbeats map[string]any `json:"heartbeats"`
		}
		err = json.NewDecoder(res.Body).Decode(&doc)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if card = doc.Heartbeats; card != nil && card["master_getinfo"] == getinfo && card["heartbeats"] == heartbeats {
			return card
		}
	}
	t.Fatalf("status.json heartbeats card %v after 5 s, want %v master getinfo and %v heartbeats", card, getinfo, heartbeats)
	return nil
}

// A stale feed flatlines; the next feed message heartbeats again.
func TestQuake3StaleFeedFlatlines(t *testing.T) {
	master := udpLoopback(t)
	d := startStaleAfter(t, "1s", `
[quake3]
query_port_is_join_port = true
[[quake3.masters]]
address = "`+master.LocalAddr().String()+`"
heartbeat = "EnemyTerritory-1"
flatline = "ETFlatline-1"
`)
	if msg, _ := readFrom(t, master); string(msg) != q3hdr+"heartbeat EnemyTerritory-1\n" {
		t.Fatalf("first: %q", msg)
	}
	fc := d.Feed(t)
	if _, err := fc.Ping(); err != nil {
		t.Fatal(err)
	}
	if msg, _ := readFrom(t, master); string(msg) != q3hdr+"heartbeat ETFlatline-1\n" {
		t.Fatalf("stale: %q, want the flatline", msg)
	}
	if _, err := fc.Ping(); err != nil {
		t.Fatal(err)
	}
	if msg, _ := readFrom(t, master); string(msg) != q3hdr+"heartbeat EnemyTerritory-1\n" {
		t.Fatalf("live again: %q, want a heartbeat", msg)
	}
}

// The per-IP packet rate (ioquake3's burst then 1/s) applies before serving.
func TestQuake3PacketRate(t *testing.T) {
	d := daemontest.Start(t, mods, "[quake3]\npacket_rate = 0.5\npacket_burst = 3\n")
	c := udpLoopback(t)
	public := d.UDP()
	for i := 0; i < 6; i++ {
		c.WriteToUDPAddrPort([]byte(q3hdr+"getinfo\n"), public)
	}
	answered := 0
	buf := make([]byte, 4096)
	for {
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if _, _, err := c.ReadFromUDPAddrPort(buf); err != nil {
			break
		}
		answered++
	}
	if answered != 3 {
		t.Errorf("%d of 6 getinfo answered at once, want the burst of 3", answered)
	}
}

// echoGameServer is a fake game server: it answers every datagram with
// "from <port> " and the datagram.
func echoGameServer(t *testing.T) *net.UDPConn {
	t.Helper()
	game := udpLoopback(t)
	go func() {
		buf := make([]byte, 65535)
		for {
			n, src, err := game.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			game.WriteToUDPAddrPort(append([]byte(fmt.Sprintf("%sfrom %d ", q3hdr, src.Port())), buf[:n]...), src)
		}
	}()
	return game
}

// While the feed is stale queryd answers no query, but relay mode still
// carries the game's traffic.
func TestQuake3RelayWhileStale(t *testing.T) {
	game := echoGameServer(t)
	d := startStaleAfter(t, "200ms", "[relay]\nupstream = \""+game.LocalAddr().String()+"\"\n")
	if _, err := d.Feed(t).Ping(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Second); d.Metric(t, "queryd_feed_stale", "") != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the feed did not go stale within 3 s")
		}
	}
	c := udpLoopback(t)
	public := d.UDP()
	c.WriteToUDPAddrPort([]byte(q3hdr+"getinfo"), public)
	c.WriteToUDPAddrPort([]byte(q3hdr+"connect"), public)
	reply, _ := readFrom(t, c)
	if !bytes.HasPrefix(reply, []byte(q3hdr+"from ")) || !bytes.HasSuffix(reply, []byte("connect")) {
		t.Fatalf("got %q, want the game server's answer to connect (and nothing for getinfo)", reply)
	}
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, _, err := c.ReadFromUDPAddrPort(make([]byte, 4096)); err == nil {
		t.Errorf("a second datagram came while stale (%d bytes)", n)
	}
}

// Relay mode in front of a fake game server: unclaimed datagrams reach the
// game server through one session per client and come back from the public
// port; queries are still answered by queryd; the feed's peer op names the
// client behind a session port.
func TestQuake3RelayMode(t *testing.T) {
	game := echoGameServer(t)
	d := daemontest.Start(t, mods, `
[relay]
upstream = "`+game.LocalAddr().String()+`"
`)
	public := d.UDP()
	fc := d.Feed(t)
	ports := map[int]netip.AddrPort{}
	for i := 0; i < 2; i++ {
		c := udpLoopback(t)
		c.WriteToUDPAddrPort([]byte(q3hdr+"getchallenge"), public)
		reply, from := readFrom(t, c)
		var port int
		if _, err := fmt.Sscanf(string(reply), q3hdr+"from %d ", &port); err != nil || from != public {
			t.Fatalf("client %d: %q from %s: %v", i, reply, from, err)
		}
		ports[port] = c.LocalAddr().(*net.UDPAddr).AddrPort()
		// The same client's query is answered by queryd, not relayed.
		c.WriteToUDPAddrPort([]byte(q3hdr+"getinfo"), public)
		if reply, _ := readFrom(t, c); !bytes.HasPrefix(reply, []byte(q3hdr+"infoResponse\n")) {
			t.Fatalf("client %d getinfo: %q", i, reply)
		}
	}
	if len(ports) != 2 {
		t.Fatalf("two clients share a session: %v", ports)
	}
	for port, want := range ports {
		rep, err := fc.Do(map[string]any{"op": "peer", "port": port})
		if err != nil || rep.Peer != want.String() {
			t.Errorf("peer %d: %+v %v, want %s", port, rep, err, want)
		}
	}
	if rep, err := fc.Do(map[string]any{"op": "peer", "port": 1}); err == nil || rep.OK {
		t.Errorf("peer of an unknown port: %+v", rep)
	}
}

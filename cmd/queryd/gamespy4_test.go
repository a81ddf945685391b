package main

import (
	"encoding/binary"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/gamespy4"
)

const gs4Extra = `version = "1.20.4"
[server.players.1]
name = "Steve"
[server.players.2]
name = "Alex"
[server.rules]
difficulty = "hard"
[gamespy4]
hostport = 25565
hostip = "203.0.113.7"
plugins = "queryd: Example 1.0"
`

func gs4Client(t *testing.T, d *daemon) *gamespy4.Client {
	t.Helper()
	c, err := gamespy4.Dial(d.udp.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestGameSpy4Loopback runs the real responder and asks it over UDP.
func TestGameSpy4Loopback(t *testing.T) {
	dir := testDir(t)
	d := startTestDaemon(t, writeConfig(t, dir, gs4Extra))
	c := gs4Client(t, d)
	b, err := c.Basic()
	if err != nil {
		t.Fatal(err)
	}
	want := gamespy4.Basic{MOTD: "config name", GameType: "SMP", Map: "config_map", NumPlayers: "2", MaxPlayers: "10", HostPort: 25565, HostIP: "203.0.113.7"}
	if *b != want {
		t.Fatalf("basic stat %+v\nwant %+v", *b, want)
	}
	f, err := c.Full()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range f.Keys {
		keys = append(keys, kv[0]+"="+kv[1])
	}
	wantKeys := "hostname=config name gametype=SMP game_id=MINECRAFT version=1.20.4 plugins=queryd: Example 1.0 " +
		"map=config_map numplayers=2 maxplayers=10 hostport=25565 hostip=203.0.113.7 difficulty=hard"
	if strings.Join(keys, " ") != wantKeys || strings.Join(f.Players, ",") != "Steve,Alex" {
		t.Fatalf("full stat %q %q\nwant %q", keys, f.Players, wantKeys)
	}

	fc, err := feed.Dial(filepath.Join(dir, "feed.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	if _, err := fc.Patch(map[string]any{"players": map[string]any{"1": nil, "7": map[string]any{"name": "Herobrine"}}, "game_port": 25570}); err != nil {
		t.Fatal(err)
	}
	f, err = c.Full()
	if err != nil || strings.Join(f.Players, ",") != "Alex,Herobrine" || f.Get("hostport") != "25570" {
		t.Fatalf("after patch: %+v %v", f, err)
	}
}

// TestGameSpy4WrongTokenSilent: a stat with a wrong token gets no reply at all.
func TestGameSpy4WrongTokenSilent(t *testing.T) {
	d := startTestDaemon(t, writeConfig(t, testDir(t), gs4Extra))
	conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(d.udp.Addrs()[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	buf := make([]byte, 2048)
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	conn.Write([]byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4})
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := gamespy4.ParseHandshake(buf[:n], [4]byte{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	stat := binary.BigEndian.AppendUint32([]byte{0xFE, 0xFD, 0x00, 1, 2, 3, 4}, tok+1)
	conn.SetDeadline(time.Now().Add(300 * time.Millisecond))
	conn.Write(stat)
	if n, err := conn.Read(buf); err == nil {
		t.Fatalf("wrong token answered with % x", buf[:n])
	}
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	conn.Write(binary.BigEndian.AppendUint32([]byte{0xFE, 0xFD, 0x00, 1, 2, 3, 4}, tok))
	if n, err = conn.Read(buf); err != nil || buf[0] != 0 {
		t.Fatalf("right token: % x %v", buf[:n], err)
	}
}

func TestQueryGameSpy4JSON(t *testing.T) {
	d := startTestDaemon(t, writeConfig(t, testDir(t), gs4Extra))
	code, out, errOut := run(t, "", "query", "-proto", "gamespy4", "-timeout", "2s", d.udp.Addrs()[0].String())
	if code != 0 {
		t.Fatalf("query: %d %s", code, errOut)
	}
	var res struct {
		Basic   gamespy4.Basic
		Full    map[string]string
		Players []string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if res.Basic.MOTD != "config name" || res.Full["map"] != "config_map" || res.Full["maxplayers"] != "10" ||
		strings.Join(res.Players, ",") != "Steve,Alex" {
		t.Fatalf("query output %s", out)
	}
}

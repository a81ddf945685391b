package gamespy4_test

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/module"
)

// gs4Extra is the test daemons' config beside daemontest.Base.
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

// startGS4 runs a daemon with the GameSpy4 module on gs4Extra.
func startGS4(t *testing.T) *daemontest.Daemon {
	t.Helper()
	return daemontest.Start(t, []daemon.Module{gamespy4.Module{}}, gs4Extra)
}

func gs4Client(t *testing.T, d *daemontest.Daemon) *gamespy4.Client {
	t.Helper()
	c, err := gamespy4.Dial(d.UDP().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestGameSpy4Loopback runs the real responder and asks it over UDP.
func TestGameSpy4Loopback(t *testing.T) {
	d := startGS4(t)
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

	if _, err := d.Feed(t).Patch(map[string]any{"players": map[string]any{"1": nil, "7": map[string]any{"name": "Herobrine"}}, "game_port": 25570}); err != nil {
		t.Fatal(err)
	}
	f, err = c.Full()
	if err != nil || strings.Join(f.Players, ",") != "Alex,Herobrine" || f.Get("hostport") != "25570" {
		t.Fatalf("after patch: %+v %v", f, err)
	}
}

// TestGameSpy4WrongTokenSilent: a stat with a wrong token gets no reply at all.
func TestGameSpy4WrongTokenSilent(t *testing.T) {
	d := startGS4(t)
	conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(d.UDP()))
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

// gs4QueryJSON is what `queryd query -proto gamespy4` printed for gs4Extra
// before the module owned its query (the full stat's keys sorted by
// encoding/json).
const gs4QueryJSON = `{
  "basic": {
    "motd": "config name",
    "gametype": "SMP",
    "map": "config_map",
    "numplayers": "2",
    "maxplayers": "10",
    "hostport": 25565,
    "hostip": "203.0.113.7"
  },
  "full": {
    "difficulty": "hard",
    "game_id": "MINECRAFT",
    "gametype": "SMP",
    "hostip": "203.0.113.7",
    "hostname": "config name",
    "hostport": "25565",
    "map": "config_map",
    "maxplayers": "10",
    "numplayers": "2",
    "plugins": "queryd: Example 1.0",
    "version": "1.20.4"
  },
  "players": [
    "Steve",
    "Alex"
  ]
}
`

// TestQueryGameSpy4JSON: the module's query answers what `queryd query`
// prints, as before, and its summary row.
func TestQueryGameSpy4JSON(t *testing.T) {
	d := startGS4(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ans, err := gamespy4.Module{}.Query(ctx, d.UDP().String(), module.QueryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	printed := daemontest.PrintedJSON(t, ans.Full) // as queryd query prints it
	if printed != gs4QueryJSON {
		t.Fatalf("query JSON\n%s\nwant\n%s", printed, gs4QueryJSON)
	}
	s := ans.Summary
	if s.Name != "config name" || s.Map != "config_map" || s.Players == nil || *s.Players != 2 || s.MaxPlayers == nil || *s.MaxPlayers != 10 {
		t.Fatalf("summary %+v", s)
	}
}

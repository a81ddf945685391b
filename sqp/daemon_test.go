package sqp_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/sqp"
)

// sqpExtra is the test daemons' config beside daemontest.Base.
const sqpExtra = `version = "1.20.4"
[server.players.1]
name = "Steve"
score = -4
ping = 20
[server.players.2]
name = "Alex"
score = 9
ping = 35
[server.rules]
difficulty = "hard"
pvp = true
spawn = 16
[sqp]
enabled = true
game_type = "Survival"
game_port = 7777
`

// startSQP runs a daemon with the SQP module on sqpExtra.
func startSQP(t *testing.T) *daemontest.Daemon {
	t.Helper()
	return daemontest.Start(t, []daemon.Module{sqp.Module{}}, sqpExtra)
}

func sqpClient(t *testing.T, d *daemontest.Daemon) *sqp.Client {
	t.Helper()
	c, err := sqp.Dial(d.UDP().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// requests returns queryd_requests_total{protocol="sqp",outcome}.
func requests(t *testing.T, d *daemontest.Daemon, outcome string) float64 {
	return d.Requests(t, "sqp", outcome)
}

// TestSQPLoopback runs the real responder and asks it over UDP, then after
// a feed patch.
func TestSQPLoopback(t *testing.T) {
	d := startSQP(t)
	c := sqpClient(t, d)
	r, err := c.Query(sqp.AllChunks)
	if err != nil {
		t.Fatal(err)
	}
	want := sqp.ServerInfo{CurrentPlayers: 2, MaxPlayers: 10, ServerName: "config name", GameType: "Survival", BuildID: "1.20.4", Map: "config_map", Port: 7777}
	if *r.Info != want {
		t.Fatalf("info %+v\nwant %+v", *r.Info, want)
	}
	var rules []string
	for _, rule := range r.Rules {
		rules = append(rules, fmt.Sprintf("%s:%d:%v", rule.Key, rule.Value.Type, rule.Value))
	}
	if got := strings.Join(rules, " "); got != "difficulty:4:{4 0 hard} pvp:0:{0 1 } spawn:1:{1 16 }" {
		t.Fatalf("rules %s", got)
	}
	if len(r.Players.Rows) != 2 || len(r.Teams.Rows) != 0 || len(r.Metrics) != 0 {
		t.Fatalf("players %+v teams %+v metrics % x", r.Players, r.Teams, r.Metrics)
	}
	if score, _ := r.Players.Get(0, "score"); int32(uint32(score.Uint)) != -4 {
		t.Fatalf("score %+v", score)
	}

	if _, err := d.Feed(t).Patch(map[string]any{"players": map[string]any{"1": nil}, "game_port": 7000, "gamemode": "Creative"}); err != nil {
		t.Fatal(err)
	}
	r, err = c.Query(sqp.ChunkServerInfo | sqp.ChunkPlayerInfo)
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := r.Players.Get(0, "name"); r.Info.CurrentPlayers != 1 || r.Info.Port != 7000 || r.Info.GameType != "Creative" || name.Str != "Alex" {
		t.Fatalf("after patch: %+v %+v", r.Info, r.Players)
	}
	if n := requests(t, d, "answered"); n != 2 {
		t.Errorf("answered %v, want 2", n)
	}
	if n := requests(t, d, "challenged"); n != 2 {
		t.Errorf("challenged %v, want 2", n)
	}
}

// TestSQPWrongTokenSilent: a query with a wrong token gets no reply and is
// counted as ignored; unknown chunk bits are counted as malformed.
func TestSQPWrongTokenSilent(t *testing.T) {
	d := startSQP(t)
	conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(d.UDP()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	buf := make([]byte, 2048)
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	conn.Write(sqp.ChallengeRequest[:])
	n, err := conn.Read(buf)
	if err != nil || n != sqp.ChallengeLen {
		t.Fatalf("challenge: % x %v", buf[:n], err)
	}
	tok := binary.BigEndian.Uint32(buf[1:5])
	conn.Write(sqp.AppendQuery(nil, tok+1, sqp.ChunkServerInfo))
	conn.Write(sqp.AppendQuery(nil, tok, 0x20))
	conn.SetDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := conn.Read(buf); err == nil {
		t.Fatalf("wrong token or unknown chunk answered with % x", buf[:n])
	}
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	conn.Write(sqp.AppendQuery(nil, tok, sqp.ChunkServerInfo))
	if n, err = conn.Read(buf); err != nil || buf[0] != sqp.TypeQuery {
		t.Fatalf("right token: % x %v", buf[:n], err)
	}
	if requests(t, d, "ignored") != 1 || requests(t, d, "malformed") != 1 {
		t.Fatalf("ignored %v, malformed %v; want 1 each", requests(t, d, "ignored"), requests(t, d, "malformed"))
	}
}

// TestSQPLargestState: the largest state queryd accepts, asked through the
// real responder: every combination's reply fits the responder's scratch
// buffer (a reply that did not would not be sent at all).
func TestSQPLargestState(t *testing.T) {
	// 32 replies of up to 32 KiB: more than the default per-IP burst.
	d := daemontest.Start(t, []daemon.Module{sqp.Module{}}, sqpExtra+"[limits]\nper_ip_rate = \"64MiB\"\nper_ip_burst = \"16MiB\"\n")
	players, rules := map[string]any{}, map[string]any{}
	for i := range 4096 {
		players[fmt.Sprint(i)] = map[string]any{"name": fmt.Sprintf("%s %04d", strings.Repeat("Ω", 59), i), "score": -i, "ping": i % 999}
	}
	for i := range 1024 - 3 { // and the 3 of [server]
		rules[fmt.Sprintf("rule_%04d_%s", i, strings.Repeat("k", 100))] = strings.Repeat("v", 250)
	}
	fc := d.Feed(t)
	if _, err := fc.Replace(map[string]any{"players": players}); err != nil { // two messages: a line is at most 1 MiB
		t.Fatal(err)
	}
	if _, err := fc.Patch(map[string]any{"rules": rules}); err != nil {
		t.Fatal(err)
	}
	c := sqpClient(t, d)
	for chunks := range sqp.AllChunks + 1 {
		r, err := c.Query(byte(chunks))
		if err != nil {
			t.Fatalf("chunks %#02x: %v", chunks, err)
		}
		if r.Info != nil && r.Info.CurrentPlayers != 4096 {
			t.Fatalf("chunks %#02x: info %+v", chunks, r.Info)
		}
		if r.Players != nil && (len(r.Players.Rows) < 20 || len(r.Players.Rows) > 400) {
			t.Fatalf("chunks %#02x: %d players listed", chunks, len(r.Players.Rows))
		}
	}
	if n := requests(t, d, "answered"); n != 32 {
		t.Fatalf("answered %v, want 32", n)
	}
}

// sqpQueryJSON is what `queryd query -proto sqp` prints for sqpExtra.
const sqpQueryJSON = `{
  "players": [
    {
      "name": "Steve",
      "ping": 20,
      "score": 4294967292
    },
    {
      "name": "Alex",
      "ping": 35,
      "score": 9
    }
  ],
  "rules": {
    "difficulty": "hard",
    "pvp": 1,
    "spawn": 16
  },
  "server_info": {
    "current_players": 2,
    "max_players": 10,
    "server_name": "config name",
    "game_type": "Survival",
    "build_id": "1.20.4",
    "map": "config_map",
    "port": 7777
  },
  "teams": []
}
`

// TestQuerySQPJSON: the module's query answers what `queryd query` prints,
// and its summary row.
func TestQuerySQPJSON(t *testing.T) {
	d := startSQP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ans, err := sqp.Module{}.Query(ctx, d.UDP().String(), module.QueryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	printed := daemontest.PrintedJSON(t, ans.Full) // as queryd query prints it
	if printed != sqpQueryJSON {
		t.Fatalf("query JSON\n%s\nwant\n%s", printed, sqpQueryJSON)
	}
	s := ans.Summary
	if s.Name != "config name" || s.Map != "config_map" || s.Players == nil || *s.Players != 2 || s.MaxPlayers == nil || *s.MaxPlayers != 10 {
		t.Fatalf("summary %+v", s)
	}
}

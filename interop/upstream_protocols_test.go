package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	rfa2s "github.com/rumblefrog/go-a2s"

	"github.com/queryd/queryd/internal/testkit"
)

// stockState is what each stock server stand-in serves: five players with
// ASCII names, so that every protocol can carry it whole, and the game
// port minequery can read (it parses hostport as an int16).
func stockState(proto string) map[string]any {
	players := map[string]any{}
	for i := range 5 {
		players[strconv.Itoa(i+1)] = map[string]any{"name": fmt.Sprintf("player%d", i+1), "score": i, "ping": 20 + i}
	}
	return map[string]any{"name": "stock " + proto + " server", "map": "stock_map", "version": "1.2.3", "max_players": 24,
		"players": players, "rules": map[string]any{"difficulty": "hard"}, "game_port": gs4HostPort}
}

// TestUpstreamEveryProtocol: for every protocol a module can poll, a
// queryd that speaks only that protocol plays the stock game server, and
// a front with [upstream] protocol set to it serves the stock server's
// name and players in all six protocols, as the real clients see them:
// go-a2s (A2S), minequery (GameSpy4), qstat (Quake 3),
// minecraft-server-util (Bedrock), sqpprobe (SQP, when present) and the
// SAGL JSON over HTTP (SAGL has no third-party client).
func TestUpstreamEveryProtocol(t *testing.T) {
	for _, proto := range []string{"a2s", "quake3", "gamespy4", "bedrock", "sqp", "sagl"} {
		t.Run(proto, func(t *testing.T) {
			back := StartDaemon(t, Options{Protocols: map[string]map[string]any{proto: nil}})
			st := stockState(proto)
			back.Replace(t, st)
			saglHTTP := testkit.FreeTCPAddr(t)
			front := StartDaemon(t, Options{
				Protocols: map[string]map[string]any{
					// hostport: minequery reads it as an int16; Quake 3 and SAGL
					// carry no game port, so the front's own would be used.
					"a2s": nil, "gamespy4": {"hostport": gs4HostPort}, "quake3": nil, "bedrock": nil, "sqp": nil,
					"sagl": {"http": saglHTTP},
				},
				Tables: map[string]map[string]any{
					"upstream": {"protocol": proto, "address": back.UDPAddr, "interval": "300ms", "timeout": "1s"},
				},
			})
			name := st["name"].(string)
			waitFrontName(t, front, name)
			t.Run("a2s_go-a2s", func(t *testing.T) {
				c, err := rfa2s.NewClient(front.UDPAddr, rfa2s.TimeoutOption(3*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				info, err := c.QueryInfo()
				if err != nil {
					t.Fatal(err)
				}
				checkEq(t, "name", info.Name, name)
				checkEq(t, "players", int(info.Players), 5)
				checkEq(t, "max players", int(info.MaxPlayers), 24)
			})
			t.Run("gamespy4_minequery", func(t *testing.T) {
				res, err := gs4Pinger().QueryFull("127.0.0.1", front.UDPPort)
				if err != nil {
					t.Fatal(err)
				}
				checkEq(t, "MOTD", res.MOTD, name)
				checkEq(t, "OnlinePlayers", res.OnlinePlayers, 5)
				checkEq(t, "MaxPlayers", res.MaxPlayers, 24)
			})
			t.Run("quake3_qstat", func(t *testing.T) {
				NeedCommand(t, "quakestat")
				r := RunCmd(t, 30*time.Second, "", "quakestat", "-q3s", front.UDPAddr, "-P", "-json", "-nnx")
				var servers []q3QstatServer
				if err := json.Unmarshal([]byte(r.Stdout), &servers); err != nil || len(servers) != 1 {
					t.Fatalf("qstat: %v %v\n%s", r.Err, err, r.Stdout)
				}
				checkEq(t, "status", servers[0].Status, "online")
				checkEq(t, "name", servers[0].Name, name)
				checkEq(t, "numplayers", servers[0].NumPlayers, 5)
			})
			t.Run("bedrock_minecraft-server-util", func(t *testing.T) {
				r := RunNode(t, 30*time.Second, "mcutil.mjs", "bedrock", "127.0.0.1", strconv.Itoa(front.UDPPort))
				var res struct {
					MOTD struct {
						Clean string `json:"clean"`
					} `json:"motd"`
					Players struct {
						Online int `json:"online"`
						Max    int `json:"max"`
					} `json:"players"`
				}
				if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
					t.Fatalf("%v %v\n%s", r.Err, err, r.Stdout)
				}
				checkEq(t, "players online", res.Players.Online, 5)
				checkEq(t, "players max", res.Players.Max, 24)
				if len(res.MOTD.Clean) < len(name) || res.MOTD.Clean[:len(name)] != name {
					t.Errorf("motd %q, want it to start with %q", res.MOTD.Clean, name)
				}
			})
			t.Run("sqp_sqpprobe", func(t *testing.T) {
				out := runSQPProbe(t, needSQPProbe(t), front.UDPAddr, sqpInfo|sqpPlayers)
				if out.ServerInfo == nil {
					t.Fatal("no server_info")
				}
				checkEq(t, "server name", out.ServerInfo.ServerName, name)
				checkEq(t, "current players", int(out.ServerInfo.CurrentPlayers), 5)
			})
			t.Run("sagl_http", func(t *testing.T) {
				resp, err := http.Get("http://" + saglHTTP + "/")
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				var js struct {
					Name    string `json:"name"`
					Players struct {
						Online int `json:"online"`
					} `json:"players"`
				}
				if err := json.Unmarshal(b, &js); err != nil {
					t.Fatalf("%v\n%s", err, b)
				}
				checkEq(t, "name", js.Name, name)
				checkEq(t, "players online", js.Players.Online, 5)
			})
		})
	}
}

// waitFrontName waits up to 15 s until the front's A2S_INFO shows name.
func waitFrontName(t *testing.T, front *Daemon, name string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if c, err := rfa2s.NewClient(front.UDPAddr, rfa2s.TimeoutOption(300*time.Millisecond)); err == nil {
			info, err := c.QueryInfo()
			c.Close()
			if err == nil && info.Name == name {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the front does not serve %q within 15 s", name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

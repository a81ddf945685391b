package bedrock_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/module"
)

// mods is the test daemons' one module.
var mods = []daemon.Module{bedrock.Module{}}

// bedrockExtra is the test daemons' config beside daemontest.Base.
const bedrockExtra = `version = "1.21.50"
gamemode = "Creative"
[server.players.1]
name = "Steve"
[server.players.2]
name = "Zoë"
[bedrock]
enabled = true
ipv4_port = 19132
ipv6_port = 19133
`

func ping(t *testing.T, d *daemontest.Daemon) *bedrock.Pong {
	t.Helper()
	c, err := bedrock.Dial(d.UDP().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.Ping()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// requests returns queryd_requests_total{protocol="bedrock",outcome}.
func requests(t *testing.T, d *daemontest.Daemon, outcome string) float64 {
	return d.Requests(t, "bedrock", outcome)
}

// TestBedrockLoopback runs the real responder and pings it over UDP: every
// field of the status from the state and [bedrock], counted as answered.
func TestBedrockLoopback(t *testing.T) {
	d := daemontest.Start(t, mods, bedrockExtra)
	p := ping(t, d)
	want := bedrock.Status{Edition: "MCPE", MOTD: "config name", Protocol: 766, Version: "1.21.50", Players: 2, MaxPlayers: 10,
		ServerID: strconv.FormatUint(p.ServerGUID, 10), SubMOTD: "config_map", GameMode: "Creative", GameModeNumber: 1,
		IPv4Port: 19132, IPv6Port: 19133}
	if p.Status != want || p.ServerGUID < bedrock.MinGUID || p.ServerGUID > bedrock.MaxGUID {
		t.Fatalf("status %+v (GUID %d)\nwant %+v", p.Status, p.ServerGUID, want)
	}
	if _, err := d.Feed(t).Patch(map[string]any{"name": "Zoë's; world", "game_port": 19200, "players": map[string]any{"1": nil}}); err != nil {
		t.Fatal(err)
	}
	p = ping(t, d)
	if p.Status.MOTD != "Zoë's: world" || p.Status.Players != 1 || p.Status.IPv4Port != 19200 || p.Status.IPv6Port != 19133 {
		t.Fatalf("after patch: %+v", p.Status)
	}
	if n := requests(t, d, "answered"); n != 2 {
		t.Errorf("queryd_requests_total{protocol=\"bedrock\",outcome=\"answered\"} = %v, want 2", n)
	}
}

// The server GUID is made once per process: a reload builds a new handler
// (the new protocol number shows) with the same GUID.
func TestBedrockGUIDStableAcrossReload(t *testing.T) {
	d := daemontest.Start(t, mods, bedrockExtra)
	before := ping(t, d)
	b, err := os.ReadFile(d.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.ConfigPath, bytes.Replace(b, []byte("enabled = true\n"), []byte("enabled = true\nprotocol = 800\n"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	d.Reload()
	after := ping(t, d)
	if after.Status.Protocol != 800 {
		t.Fatalf("after the reload: protocol %d, want 800 (the reload did not take)", after.Status.Protocol)
	}
	if after.ServerGUID != before.ServerGUID || after.Status.ServerID != before.Status.ServerID {
		t.Fatalf("GUID %d (%s) before the reload, %d (%s) after", before.ServerGUID, before.Status.ServerID, after.ServerGUID, after.Status.ServerID)
	}
}

// The per-source ping rate applies before serving; pings over it are
// counted as rate_limited.
func TestBedrockPacketRate(t *testing.T) {
	d := daemontest.Start(t, mods, bedrockExtra+"packet_rate = 0.5\npacket_burst = 3\n")
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(d.UDP()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 6; i++ {
		c.Write(bedrock.AppendPing(nil, uint64(i+1), 0))
	}
	answered := 0
	buf := make([]byte, 4096)
	for {
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err := c.Read(buf); err != nil {
			break
		}
		answered++
	}
	if answered != 3 || requests(t, d, "rate_limited") != 3 {
		t.Errorf("%d of 6 pings answered at once (%v rate limited), want the burst of 3", answered, requests(t, d, "rate_limited"))
	}
}

// In relay mode pings are answered by queryd, while RakNet's other
// offline messages (the magic at offset 1) go on to the game server.
func TestBedrockRelayForwardsConnections(t *testing.T) {
	game, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer game.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			n, src, err := game.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			game.WriteToUDPAddrPort(append([]byte("game:"), buf[:n]...), src)
		}
	}()
	d := daemontest.Start(t, mods, bedrockExtra+fmt.Sprintf("[relay]\nupstream = %q\n", game.LocalAddr().String()))
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(d.UDP()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	openConn := append(append([]byte{0x05}, bedrock.Magic[:]...), 11) // open connection request 1, protocol 11
	openConn = append(openConn, make([]byte, 1400)...)                // MTU discovery padding
	buf := make([]byte, 4096)
	for _, req := range [][]byte{bedrock.AppendPing(nil, 42, 0), openConn} {
		c.Write(req)
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("request % x…: %v", req[:4], err)
		}
		switch got := buf[:n]; req[0] {
		case bedrock.IDPing:
			if got[0] != bedrock.IDPong || binary.BigEndian.Uint64(got[1:9]) != 42 {
				t.Fatalf("ping answered with % x…, want queryd's pong", got[:min(n, 16)])
			}
		default:
			if !bytes.Equal(got, append([]byte("game:"), openConn...)) {
				t.Fatalf("open connection request answered with % x…, want the game server's", got[:min(n, 16)])
			}
		}
	}
}

// TestQueryBedrockJSON: the module's query (what `queryd query -proto
// bedrock` prints) and its summary row.
func TestQueryBedrockJSON(t *testing.T) {
	d := daemontest.Start(t, mods, bedrockExtra)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ans, err := bedrock.Module{}.Query(ctx, d.UDP().String(), module.QueryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := ans.Full.(*bedrock.Pong)
	guid := strconv.FormatUint(p.ServerGUID, 10)
	printed := daemontest.PrintedJSON(t, ans.Full) // as queryd query prints it
	want := strings.ReplaceAll(`{
  "server_guid": GUID,
  "status": {
    "edition": "MCPE",
    "motd": "config name",
    "protocol": 766,
    "version": "1.21.50",
    "players": 2,
    "max_players": 10,
    "server_id": "GUID",
    "sub_motd": "config_map",
    "game_mode": "Creative",
    "game_mode_number": 1,
    "ipv4_port": 19132,
    "ipv6_port": 19133
  },
  "raw": "MCPE;config name;766;1.21.50;2;10;GUID;config_map;Creative;1;19132;19133;"
}
`, "GUID", guid)
	if printed != want {
		t.Fatalf("query JSON\n%s\nwant\n%s", printed, want)
	}
	s := ans.Summary
	if s.Name != "config name" || s.Map != "config_map" || s.Players == nil || *s.Players != 2 || s.MaxPlayers == nil || *s.MaxPlayers != 10 {
		t.Fatalf("summary %+v", s)
	}
	probe := bedrock.Module{}.Probe()
	if !bedrock.Claims(probe.Request) || probe.Challenge(nil) {
		t.Fatalf("probe % x", probe.Request)
	}
}

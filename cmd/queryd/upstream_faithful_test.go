package main

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/sagl"
	"github.com/queryd/queryd/sqp"
)

// The fronting rows of issue 38's table: for every protocol queryd can
// poll, a stock server of that protocol (a stand-in: a queryd that speaks
// only it, with its own config and state; for Quake 3 a real ioquake3,
// interop/ioquake3_test.go) and a front of it ([upstream] protocol set
// to it, every other setting the front's defaults) are asked the same
// queries in that protocol with the project's own client, and the answers
// are compared field by field. The exceptions a protocol needs are named
// where they are made, with the reason; the modules' doc.go ("Polling a
// stock server") say the same.

// standIn starts a stock server of one protocol: a queryd with only mod,
// extra config (the protocol's own values, unlike the front's defaults)
// and the state doc.
func standIn(t *testing.T, mod daemon.Module, extra string, doc map[string]any) *daemontest.Daemon {
	t.Helper()
	back := daemontest.Start(t, []daemon.Module{mod}, extra)
	if _, err := back.Feed(t).Replace(doc); err != nil {
		t.Fatal(err)
	}
	return back
}

// faithfulFront starts a queryd with every module (Bedrock and SQP on)
// and otherwise default settings in front of back, polling it in proto,
// and waits until its state is back's: name and players.
func faithfulFront(t *testing.T, proto string, back netip.AddrPort, name string, players int) *daemontest.Daemon {
	t.Helper()
	front := daemontest.Start(t, mods, fmt.Sprintf(`[upstream]
protocol = %q
address = %q
interval = "200ms"
timeout = "1s"
[bedrock]
enabled = true
packet_rate = 0.0
[sqp]
enabled = true
`, proto, back))
	deadline := time.Now().Add(15 * time.Second)
	for s := front.Snapshot(); s.Name != name || len(s.Players) != players; s = front.Snapshot() {
		if time.Now().After(deadline) {
			t.Fatalf("the front's state is %q with %d players within 15 s, want %q with %d", s.Name, len(s.Players), name, players)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return front
}

// sameFields compares two structs field by field (exported fields; those
// in skip are not compared: the caller names why) and reports each that
// differs; it returns how many fields it compared.
func sameFields(t *testing.T, what string, stock, front any, skip ...string) int {
	t.Helper()
	sv, fv := reflect.ValueOf(stock), reflect.ValueOf(front)
	n := 0
	for i := range sv.NumField() {
		f := sv.Type().Field(i)
		if !f.IsExported() || slices.Contains(skip, f.Name) {
			continue
		}
		n++
		if a, b := sv.Field(i).Interface(), fv.Field(i).Interface(); !reflect.DeepEqual(a, b) {
			t.Errorf("%s %s: the front says %#v, the stock server %#v", what, f.Name, b, a)
		}
	}
	return n
}

// a2sStock is the stand-in stock A2S server's state: 40 rules (what a
// Source server with a few plugins shows), 6 players (2 bots connected
// longest), every EDF field.
func a2sStock() map[string]any {
	rules := map[string]any{}
	for i := range 40 {
		rules[fmt.Sprintf("sm_cvar_%02d", i)] = fmt.Sprintf("value %d", i)
	}
	players := map[string]any{}
	for i := range 6 {
		p := map[string]any{"name": fmt.Sprintf("Player %d ✓", i), "score": (i - 2) * 7, "time": 100 + 10*i}
		if i >= 4 {
			p = map[string]any{"name": fmt.Sprintf("BOT %d", i), "score": 1000 + i, "time": 9000 + i, "bot": true}
		}
		players[strconv.Itoa(10+i)] = p
	}
	return map[string]any{
		"name": "Stock Source server", "map": "ctf_2fort", "folder": "tf", "game": "Team Fortress", "version": "8835751",
		"max_players": 24, "players": players, "rules": rules, "password": true, "vac": true, "server_type": "listen",
		"environment": "windows", "steam_id": "90071992547409920", "game_port": 27016, "keywords": "alltalk,cp",
		"sourcetv": map[string]any{"port": 27020, "name": "SourceTV"},
	}
}

// TestFaithfulA2S: a front of a stock A2S server (40 rules; app id 440,
// protocol byte 7 and a game id, none the front's defaults) answers
// A2S_INFO, A2S_PLAYER and A2S_RULES as the server does: every INFO field,
// every player, the 40 rules and no others. Before the fix the front had
// 42 rules (a2s_app_id, a2s_protocol, a2s_game_id besides) and its own
// app id (480) and protocol (17). Exception: durations (the clock runs
// between the two answers: within 2 s).
func TestFaithfulA2S(t *testing.T) {
	doc := a2sStock()
	back := standIn(t, a2s.Module{}, "[a2s]\napp_id = 440\nprotocol = 7\ngame_id = 1234567890123\n", doc)
	front := faithfulFront(t, "a2s", back.UDP(), doc["name"].(string), 6)

	ask := func(d *daemontest.Daemon) (*a2s.Info, []a2s.PlayerInfo, [][2]string) {
		c, err := a2s.Dial(d.UDP().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		info, err := c.Info()
		if err != nil {
			t.Fatal(err)
		}
		players, err := c.Players()
		if err != nil {
			t.Fatal(err)
		}
		rules, err := c.Rules()
		if err != nil {
			t.Fatal(err)
		}
		return info, players, rules
	}
	sInfo, sPlayers, sRules := ask(back)
	fInfo, fPlayers, fRules := ask(front)

	n := sameFields(t, "A2S_INFO", *sInfo, *fInfo)
	if sInfo.AppID != 440 || sInfo.Protocol != 7 || sInfo.GameID != 1234567890123 {
		t.Fatalf("the stand-in's INFO %+v: the test proves nothing", sInfo)
	}
	if len(fPlayers) != len(sPlayers) {
		t.Errorf("A2S_PLAYER: the front lists %d players, the stock server %d", len(fPlayers), len(sPlayers))
	}
	for i := range min(len(fPlayers), len(sPlayers)) {
		s, f := sPlayers[i], fPlayers[i]
		sameFields(t, "A2S_PLAYER "+strconv.Itoa(i), s, f, "Duration") // below
		if d := math.Abs(float64(f.Duration - s.Duration)); d > 2 {
			t.Errorf("A2S_PLAYER %d duration: the front says %.1f s, the stock server %.1f s", i, f.Duration, s.Duration)
		}
	}
	sMap, fMap := rulesMap(sRules), rulesMap(fRules)
	if len(sRules) != 40 || len(fRules) != len(sRules) || !maps.Equal(sMap, fMap) {
		t.Errorf("A2S_RULES: the front has %d rules, the stock server %d\nfront %v\nstock %v", len(fRules), len(sRules), fMap, sMap)
	}
	if !slices.Equal(fRules, sRules) {
		t.Errorf("A2S_RULES: the same rules in another order (both sort by key)")
	}
	t.Logf("A2S: %d INFO fields compared (the front's app id %d, protocol %d, game id %d); %d players (the stock server %d); %d rules (the stock server %d)",
		n, fInfo.AppID, fInfo.Protocol, fInfo.GameID, len(fPlayers), len(sPlayers), len(fRules), len(sRules))
}

func rulesMap(rules [][2]string) map[string]string {
	m := map[string]string{}
	for _, kv := range rules {
		m[kv[0]] = kv[1]
	}
	return m
}

// TestFaithfulGameSpy4: a front of a stock GameSpy4 server (a Bukkit-like
// Minecraft server: its own gametype, game_id, plugins and hostip, none
// the front's defaults) answers the basic and full stat as the server
// does: every vanilla key, every extra key (in the same order), every
// player. Before the fix the front said its [gamespy4] gametype, game_id,
// plugins and hostip. No exception.
func TestFaithfulGameSpy4(t *testing.T) {
	players := map[string]any{}
	for i, n := range []string{"Steve", "Alex", "Notch", "jeb_", "Dinnerbone"} {
		players[strconv.Itoa(i+1)] = map[string]any{"name": n}
	}
	doc := map[string]any{"name": "A Bukkit server", "map": "world", "version": "1.20.4", "max_players": 20, "players": players,
		"game_port": 25565, "rules": map[string]any{"difficulty": "hard", "whitelist": "off", "motd_extra": "§aHello"}}
	back := standIn(t, gamespy4.Module{}, `[gamespy4]
gametype = "CTF"
game_id = "MINECRAFT_BUKKIT"
plugins = "CraftBukkit on Bukkit 1.2.5-R4.0: WorldEdit 5.3; CommandBook 2.1"
hostip = "203.0.113.7"
`, doc)
	front := faithfulFront(t, "gamespy4", back.UDP(), "A Bukkit server", 5)

	ask := func(d *daemontest.Daemon) (*gamespy4.Basic, *gamespy4.Full) {
		c, err := gamespy4.Dial(d.UDP().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		b, err := c.Basic()
		if err != nil {
			t.Fatal(err)
		}
		f, err := c.Full()
		if err != nil {
			t.Fatal(err)
		}
		return b, f
	}
	sBasic, sFull := ask(back)
	fBasic, fFull := ask(front)
	n := sameFields(t, "basic stat", *sBasic, *fBasic)
	if sFull.Get("plugins") == "" || sFull.Get("hostip") != "203.0.113.7" {
		t.Fatalf("the stand-in's full stat %v: the test proves nothing", sFull.Keys)
	}
	if !slices.Equal(fFull.Keys, sFull.Keys) {
		t.Errorf("full stat keys\nfront %q\nstock %q", fFull.Keys, sFull.Keys)
	}
	if !slices.Equal(fFull.Players, sFull.Players) {
		t.Errorf("full stat players: the front %q, the stock server %q", fFull.Players, sFull.Players)
	}
	t.Logf("GameSpy4: %d basic stat fields equal; full stat: %d keys equal in order (gametype %q, game_id %q, plugins %q, hostip %q), %d players equal",
		n, len(fFull.Keys), fFull.Get("gametype"), fFull.Get("game_id"), fFull.Get("plugins"), fFull.Get("hostip"), len(fFull.Players))
}

// TestFaithfulBedrock: a front of a stock Bedrock server (its own
// edition, protocol, server GUID, game mode number and IPv6 port) answers
// the unconnected ping as the server does: the header's GUID and every
// field of the status string, byte for byte. Before the fix the front said
// its [bedrock] values and its own GUID. Exception: the echoed time (each
// ping's own; the client checks it).
func TestFaithfulBedrock(t *testing.T) {
	doc := map[string]any{"name": "Stock BDS §6gold", "map": "Bedrock level", "version": "1.14.60", "gamemode": "Creative",
		"max_players": 30, "game_port": 19132, "players": map[string]any{"1": map[string]any{"name": "a"}, "2": map[string]any{"name": "b"}},
		"bedrock": map[string]any{"server_id": "13253860892328930865"}}
	back := standIn(t, bedrock.Module{}, `[bedrock]
enabled = true
edition = "MCEE"
protocol = 390
game_mode_number = 2
ipv6_port = 19135
packet_rate = 0.0
`, doc)
	front := faithfulFront(t, "bedrock", back.UDP(), doc["name"].(string), 2)

	ask := func(d *daemontest.Daemon) *bedrock.Pong {
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
	stock, fr := ask(back), ask(front)
	if stock.Status.Edition != "MCEE" || stock.Status.Protocol != 390 || stock.ServerGUID != 13253860892328930865 {
		t.Fatalf("the stand-in's pong %+v: the test proves nothing", stock)
	}
	n := sameFields(t, "pong", *stock, *fr, "Time") // each ping's own
	n += sameFields(t, "pong status", stock.Status, fr.Status)
	t.Logf("Bedrock: %d fields equal: %q", n, fr.Raw)
}

// TestFaithfulSQP: a front of a stock SQP server answers a query of every
// chunk as the server does: ServerInfo, every rule with its type,
// PlayerInfo's fields and players, TeamInfo and Metrics. Exception: the
// challenge token (each server's own; the client answers it).
func TestFaithfulSQP(t *testing.T) {
	players := map[string]any{}
	for i := range 4 {
		players[strconv.Itoa(i)] = map[string]any{"name": fmt.Sprintf("unity%d", i), "score": -3 + 5*i, "ping": 20 + i}
	}
	doc := map[string]any{"name": "Stock Unity server", "map": "Arena", "version": "build 42", "gamemode": "Deathmatch",
		"max_players": 16, "players": players, "rules": map[string]any{"friendlyFire": true, "round": 3, "big": 70000,
			"huge": "5000000000", "motd": "welcome", "neg": "-5"}}
	back := standIn(t, sqp.Module{}, "[sqp]\nenabled = true\ngame_port = 7777\n", doc)
	front := faithfulFront(t, "sqp", back.UDP(), doc["name"].(string), 4)

	ask := func(d *daemontest.Daemon) *sqp.Response {
		c, err := sqp.Dial(d.UDP().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r, err := c.Query(sqp.AllChunks)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	stock, fr := ask(back), ask(front)
	n := sameFields(t, "ServerInfo", *stock.Info, *fr.Info)
	n += sameFields(t, "query reply", *stock, *fr, "Info")
	t.Logf("SQP: %d ServerInfo and chunk fields equal; %d rules, %d players, %d teams", n, len(fr.Rules), len(fr.Players.Rows), len(fr.Teams.Rows))
}

// TestFaithfulSAGL: a front of a stock SAGL server answers the info query
// with the server's JSON, byte for byte: every member, the players with
// their own ids (3, 8, 15). Before the fix the front's players had the
// poller's ids (0, 1, 2). Exception: the challenge token (each server's
// own); the stock server has no logo (the front does not fetch one).
func TestFaithfulSAGL(t *testing.T) {
	doc := map[string]any{"name": "Example RP", "version": "0.2.0", "protocol": 102, "max_players": 50,
		"players": map[string]any{
			"3":  map[string]any{"name": "Thomas", "score": 12, "ping": 31},
			"8":  map[string]any{"name": "Sam", "score": 4, "ping": 58},
			"15": map[string]any{"name": "Zoë", "score": -2, "ping": 120},
		},
		"description": "Los Santos roleplay.", "gamemode": "Roleplay", "language": "en", "tags": []any{"roleplay", "whitelist"},
		"links":    map[string]any{"website": "https://example.com", "discord": "https://discord.gg/example"},
		"values":   map[string]any{"copsOnDuty": 3, "map": "Los Santos", "open": true, "none": nil},
		"branding": map[string]any{"primary": "#ff8800", "show_name": true}}
	back := standIn(t, sagl.Module{}, "", doc)
	front := faithfulFront(t, "sagl", back.UDP(), "Example RP", 3)

	ask := func(d *daemontest.Daemon) *sagl.Result {
		c, err := sagl.Dial(d.UDP().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r, err := c.Info()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	stock, fr := ask(back), ask(front)
	n := sameFields(t, "JSON", stock.Info, fr.Info)
	if !bytes.Equal(fr.JSON, stock.JSON) {
		t.Errorf("the front's JSON\n %s\nthe stock server's\n %s", fr.JSON, stock.JSON)
	}
	t.Logf("SAGL: %d members equal, the JSON byte for byte (%d bytes): %s", n, len(fr.JSON), fr.JSON)
}

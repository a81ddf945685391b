package interop

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dreamscached/minequery/v2"
	"github.com/xrjr/mcutils/pkg/query"
)

// gs4HostPort is the hostport the GameSpy4 tests advertise: below 32768,
// because minequery and mcutils read hostport as a signed 16-bit number and
// the daemon's own (free, ephemeral) port is usually above that.
const gs4HostPort = 25565

// gs4Only enables the GameSpy4 responder with a fixed hostport and hostip.
var gs4Only = Options{Protocols: map[string]map[string]any{
	"gamespy4": {"hostport": gs4HostPort, "hostip": "127.0.0.1"},
}}

// gs4State is a Minecraft-like state that fits one 1,024-byte full stat.
// Its non-ASCII text has no UTF-8 byte that windows-1252 leaves undefined
// (81 8D 8F 90 9D), so gamedig's decoding can be undone exactly.
func gs4State() TestState {
	s := TestState{
		Name:       "queryd interop — Zoë's Minecraft",
		Map:        "world_interop",
		Version:    "1.20.4",
		MaxPlayers: 20,
		Rules:      map[string]string{"difficulty": "hard"},
	}
	for i, name := range []string{"Steve", "Alex", "Zoë", "日本語", "Ελληνικά", "xX_Creeper_Xx", "O'Brien", "Notch_2009"} {
		s.Players = append(s.Players, TestPlayer{ID: uint32(i + 1), Name: name, Score: int32(i)})
	}
	return s
}

// TestGameSpy4Clients feeds gs4State and asks it through every real
// GameSpy4 / Minecraft Query client; each client check is one subtest.
func TestGameSpy4Clients(t *testing.T) {
	d := StartDaemon(t, gs4Only)
	st := gs4State()
	d.Replace(t, st.Doc())
	host, port := "127.0.0.1", d.UDPPort

	t.Run("qstat_gs4", func(t *testing.T) { clientCheck(t, "qstat_gs4", "socket"); gs4Qstat(t, d.UDPAddr, st) })
	t.Run("gamedig_gamespy3", func(t *testing.T) { clientCheck(t, "gamedig_gamespy3", "socket"); gs4Gamedig(t, d.UDPAddr, st) })
	t.Run("npm_minecraft-server-util_queryBasic", func(t *testing.T) {
		clientCheck(t, "npm_minecraft-server-util_queryBasic", "socket")
		gs4McsuBasic(t, host, port, st)
	})
	t.Run("npm_minecraft-server-util_queryFull", func(t *testing.T) {
		clientCheck(t, "npm_minecraft-server-util_queryFull", "socket")
		gs4McsuFull(t, host, port, st)
	})
	t.Run("go_minequery_basic_strict", func(t *testing.T) {
		clientCheck(t, "go_minequery_basic_strict", "socket")
		gs4MinequeryBasic(t, host, port, st)
	})
	t.Run("go_minequery_full_strict", func(t *testing.T) {
		clientCheck(t, "go_minequery_full_strict", "socket")
		gs4MinequeryFull(t, host, port, st)
	})
	t.Run("go_mcutils_basic", func(t *testing.T) { clientCheck(t, "go_mcutils_basic", "socket"); gs4McutilsBasic(t, host, port, st) })
	t.Run("go_mcutils_full", func(t *testing.T) { clientCheck(t, "go_mcutils_full", "socket"); gs4McutilsFull(t, host, port, st) })
}

// TestGameSpy4TruncatedList: with more players than fit one 1,024-byte
// datagram, the strictest client (minequery, which reads 1,024 bytes)
// still parses the full stat; it lists the first players in order and
// numplayers counts them all.
func TestGameSpy4TruncatedList(t *testing.T) {
	d := StartDaemon(t, gs4Only)
	st := gs4State()
	st.Players = nil
	for i := 0; i < 150; i++ {
		st.Players = append(st.Players, TestPlayer{ID: uint32(i), Name: fmt.Sprintf("Player_%03d", i)})
	}
	d.Replace(t, st.Doc())
	res, err := gs4Pinger().QueryFull("127.0.0.1", d.UDPPort)
	if err != nil {
		t.Fatalf("minequery full: %v", err)
	}
	gs4Eq(t, "numplayers", res.OnlinePlayers, 150)
	n := len(res.SamplePlayers)
	if n < 40 || n >= 150 {
		t.Fatalf("%d players listed; want the first 40 to 149 of 150", n)
	}
	for i, name := range res.SamplePlayers {
		if want := fmt.Sprintf("Player_%03d", i); name != want {
			t.Fatalf("player %d is %q, want %q (the first players, in order)", i, name, want)
		}
	}
	t.Logf("full stat lists %d of 150 players", n)
}

// gs4Qstat runs Debian's qstat -gs4. With -nnx it drops every non-ASCII
// byte (its JSON cannot carry them), so text is compared that way.
func gs4Qstat(t *testing.T, addr string, st TestState) {
	NeedCommand(t, "quakestat")
	r := RunCmd(t, 30*time.Second, "", "quakestat", "-gs4", addr, "-R", "-P", "-json", "-nnx")
	if r.Err != nil {
		t.Fatalf("qstat: %v", r.Err)
	}
	var servers []struct {
		Status     string            `json:"status"`
		Name       string            `json:"name"`
		Map        string            `json:"map"`
		NumPlayers int               `json:"numplayers"`
		MaxPlayers int               `json:"maxplayers"`
		Rules      map[string]string `json:"rules"`
		Players    []struct {
			Name string `json:"name"`
		} `json:"players"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &servers); err != nil || len(servers) != 1 {
		t.Fatalf("qstat output is not one server (%v):\n%s", err, r.Stdout)
	}
	s := servers[0]
	if s.Status != "online" {
		t.Fatalf("qstat status %q, want online:\n%s", s.Status, r.Stdout)
	}
	gs4Eq(t, "name", s.Name, gs4ASCII(st.Name))
	gs4Eq(t, "map", s.Map, st.Map)
	gs4Eq(t, "numplayers", s.NumPlayers, len(st.Players))
	gs4Eq(t, "maxplayers", s.MaxPlayers, st.MaxPlayers)
	gs4Eq(t, "rules.version", s.Rules["version"], st.Version)
	var names, want []string
	for _, p := range s.Players {
		names = append(names, p.Name)
	}
	for _, p := range st.Players {
		want = append(want, gs4ASCII(p.Name))
	}
	gs4SameNames(t, "qstat players (non-ASCII dropped)", names, want)
}

// gs4Gamedig runs npm gamedig, protocol gamespy3. It decodes strings as
// windows-1252, so the UTF-8 text is recovered from that before comparing;
// it fills its "map" from "mapname" only, so the map is read from raw.map.
func gs4Gamedig(t *testing.T, addr string, st TestState) {
	r := RunGamedig(t, "gamespy3", addr, nil)
	if r.Err != nil {
		t.Fatalf("gamedig: %v", r.Err)
	}
	var g struct {
		Name       string `json:"name"`
		NumPlayers int    `json:"numplayers"`
		MaxPlayers int    `json:"maxplayers"`
		Players    []struct {
			Name string `json:"name"`
		} `json:"players"`
		Raw map[string]any `json:"raw"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &g); err != nil {
		t.Fatalf("gamedig output: %v\n%s", err, r.Stdout)
	}
	gs4Eq(t, "name", gs4FromCP1252(t, g.Name), st.Name)
	rawMap, _ := g.Raw["map"].(string)
	gs4Eq(t, "raw.map", rawMap, st.Map)
	gs4Eq(t, "numplayers", g.NumPlayers, len(st.Players))
	gs4Eq(t, "maxplayers", g.MaxPlayers, st.MaxPlayers)
	var names []string
	for _, p := range g.Players {
		names = append(names, gs4FromCP1252(t, p.Name))
	}
	gs4SameNames(t, "gamedig players", names, gs4Names(st))
}

// mcsuResult is the part of minecraft-server-util's results the checks read.
type mcsuResult struct {
	MOTD struct {
		Clean string `json:"clean"`
	} `json:"motd"`
	GameType string `json:"gameType"`
	Map      string `json:"map"`
	Version  string `json:"version"`
	Players  struct {
		Online int      `json:"online"`
		Max    int      `json:"max"`
		List   []string `json:"list"`
	} `json:"players"`
	HostPort int    `json:"hostPort"`
	HostIP   string `json:"hostIP"`
}

func runMcsu(t *testing.T, mode, host string, port int) mcsuResult {
	t.Helper()
	r := RunNode(t, 30*time.Second, "mcutil.mjs", mode, host, strconv.Itoa(port))
	if r.Err != nil {
		t.Fatalf("minecraft-server-util %s: %v", mode, r.Err)
	}
	var res mcsuResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("minecraft-server-util output: %v\n%s", err, r.Stdout)
	}
	return res
}

// gs4McsuBasic runs npm minecraft-server-util queryBasic. It decodes
// strings as latin-1 (one character per byte), undone before comparing.
func gs4McsuBasic(t *testing.T, host string, port int, st TestState) {
	res := runMcsu(t, "basic", host, port)
	gs4Eq(t, "motd", gs4FromLatin1(t, res.MOTD.Clean), st.Name)
	gs4Eq(t, "gameType", res.GameType, "SMP")
	gs4Eq(t, "map", res.Map, st.Map)
	gs4Eq(t, "players.online", res.Players.Online, len(st.Players))
	gs4Eq(t, "players.max", res.Players.Max, st.MaxPlayers)
	gs4Eq(t, "hostPort", res.HostPort, gs4HostPort)
	gs4Eq(t, "hostIP", res.HostIP, "127.0.0.1")
}

// gs4McsuFull runs npm minecraft-server-util queryFull (it rejects any
// byte after the player list).
func gs4McsuFull(t *testing.T, host string, port int, st TestState) {
	res := runMcsu(t, "full", host, port)
	gs4Eq(t, "motd", gs4FromLatin1(t, res.MOTD.Clean), st.Name)
	gs4Eq(t, "map", res.Map, st.Map)
	gs4Eq(t, "version", res.Version, st.Version)
	gs4Eq(t, "players.online", res.Players.Online, len(st.Players))
	gs4Eq(t, "players.max", res.Players.Max, st.MaxPlayers)
	gs4Eq(t, "hostPort", res.HostPort, gs4HostPort)
	var names []string
	for _, n := range res.Players.List {
		names = append(names, gs4FromLatin1(t, n))
	}
	gs4SameNames(t, "minecraft-server-util players", names, gs4Names(st))
}

// gs4Pinger is minequery in strict mode: it checks the paddings, gametype
// "SMP", game_id "MINECRAFT" and the closing NULs. No session cache, no SRV.
func gs4Pinger() *minequery.Pinger {
	return minequery.NewPinger(
		minequery.WithTimeout(5*time.Second),
		minequery.WithUseStrict(true),
		minequery.WithQueryCacheDisabled(),
		minequery.WithPreferSRVRecord(false),
	)
}

func gs4MinequeryBasic(t *testing.T, host string, port int, st TestState) {
	res, err := gs4Pinger().QueryBasic(host, port)
	if err != nil {
		t.Fatalf("minequery basic: %v", err)
	}
	gs4Eq(t, "MOTD", res.MOTD, st.Name)
	gs4Eq(t, "Map", res.Map, st.Map)
	gs4Eq(t, "OnlinePlayers", res.OnlinePlayers, len(st.Players))
	gs4Eq(t, "MaxPlayers", res.MaxPlayers, st.MaxPlayers)
	gs4Eq(t, "Port", res.Port, gs4HostPort)
	gs4Eq(t, "Host", res.Host, "127.0.0.1")
}

func gs4MinequeryFull(t *testing.T, host string, port int, st TestState) {
	res, err := gs4Pinger().QueryFull(host, port)
	if err != nil {
		t.Fatalf("minequery full: %v", err)
	}
	gs4Eq(t, "MOTD", res.MOTD, st.Name)
	gs4Eq(t, "Map", res.Map, st.Map)
	gs4Eq(t, "Version", res.Version, st.Version)
	gs4Eq(t, "OnlinePlayers", res.OnlinePlayers, len(st.Players))
	gs4Eq(t, "MaxPlayers", res.MaxPlayers, st.MaxPlayers)
	gs4Eq(t, "Port", res.Port, gs4HostPort)
	gs4Eq(t, "Data[difficulty]", res.Data["difficulty"], st.Rules["difficulty"])
	gs4SameNames(t, "minequery players", res.SamplePlayers, gs4Names(st))
}

func gs4McutilsClient(t *testing.T, host string, port int) (*query.QueryClient, uint32) {
	t.Helper()
	c := query.NewClient(host, port)
	c.DialTimeout, c.ReadTimeout = 5*time.Second, 5*time.Second
	if err := c.Connect(); err != nil {
		t.Fatalf("mcutils connect: %v", err)
	}
	t.Cleanup(func() { c.Disconnect() })
	tok, err := c.Handshake()
	if err != nil {
		t.Fatalf("mcutils handshake: %v", err)
	}
	return c, tok
}

func gs4McutilsBasic(t *testing.T, host string, port int, st TestState) {
	c, tok := gs4McutilsClient(t, host, port)
	res, err := c.BasicStat(tok)
	if err != nil {
		t.Fatalf("mcutils basic: %v", err)
	}
	gs4Eq(t, "MOTD", res.MOTD, st.Name)
	gs4Eq(t, "Map", res.Map, st.Map)
	gs4Eq(t, "NumPlayers", res.NumPlayers, len(st.Players))
	gs4Eq(t, "MaxPlayers", res.MaxPlayers, st.MaxPlayers)
	gs4Eq(t, "HostPort", res.HostPort, gs4HostPort)
	gs4Eq(t, "HostIP", res.HostIP, "127.0.0.1")
}

func gs4McutilsFull(t *testing.T, host string, port int, st TestState) {
	c, tok := gs4McutilsClient(t, host, port)
	res, err := c.FullStat(tok)
	if err != nil {
		t.Fatalf("mcutils full: %v", err)
	}
	p := res.Properties
	gs4Eq(t, "hostname", p["hostname"], st.Name)
	gs4Eq(t, "map", p["map"], st.Map)
	gs4Eq(t, "numplayers", p["numplayers"], strconv.Itoa(len(st.Players)))
	gs4Eq(t, "maxplayers", p["maxplayers"], strconv.Itoa(st.MaxPlayers))
	gs4Eq(t, "game_id", p["game_id"], "MINECRAFT")
	gs4SameNames(t, "mcutils players", res.OnlinePlayers, gs4Names(st))
}

func gs4Names(st TestState) []string {
	var names []string
	for _, p := range st.Players {
		names = append(names, p.Name)
	}
	return names
}

func gs4Eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// gs4SameNames compares two name lists as sorted multisets.
func gs4SameNames(t *testing.T, what string, got, want []string) {
	t.Helper()
	g := append([]string{}, got...)
	w := append([]string{}, want...)
	sort.Strings(g)
	sort.Strings(w)
	if strings.Join(g, "\x00") != strings.Join(w, "\x00") {
		t.Errorf("%s: got %q\nwant %q", what, g, w)
	}
}

// gs4ASCII drops every byte outside ASCII, as qstat -nnx does.
func gs4ASCII(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] < 0x80 {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// gs4FromLatin1 turns text a client decoded as latin-1 (one character per
// byte) back into the bytes it received, read as UTF-8.
func gs4FromLatin1(t *testing.T, s string) string {
	t.Helper()
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			t.Errorf("%q is not latin-1 decoded text (%U)", s, r)
			return s
		}
		b = append(b, byte(r))
	}
	return string(b)
}

// cp1252High maps windows-1252's characters for bytes 0x80–0x9F back to the bytes.
var cp1252High = map[rune]byte{
	'€': 0x80, '‚': 0x82, 'ƒ': 0x83, '„': 0x84, '…': 0x85, '†': 0x86, '‡': 0x87,
	'ˆ': 0x88, '‰': 0x89, 'Š': 0x8A, '‹': 0x8B, 'Œ': 0x8C, 'Ž': 0x8E,
	'‘': 0x91, '’': 0x92, '“': 0x93, '”': 0x94, '•': 0x95, '–': 0x96, '—': 0x97,
	'˜': 0x98, '™': 0x99, 'š': 0x9A, '›': 0x9B, 'œ': 0x9C, 'ž': 0x9E, 'Ÿ': 0x9F,
}

// gs4FromCP1252 turns text a client decoded as windows-1252 back into the
// bytes it received, read as UTF-8.
func gs4FromCP1252(t *testing.T, s string) string {
	t.Helper()
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if c, ok := cp1252High[r]; ok {
			b = append(b, c)
			continue
		}
		if r > 0xFF || (r >= 0x80 && r <= 0x9F) {
			t.Errorf("%q is not windows-1252 decoded text (%U)", s, r)
			return s
		}
		b = append(b, byte(r))
	}
	return string(b)
}

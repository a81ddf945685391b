package interop

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// Ports the Bedrock tests advertise ([bedrock] ipv4_port / ipv6_port),
// vanilla's defaults.
const (
	mbeIPv4Port = 19132
	mbeIPv6Port = 19133
)

// mbeOnly enables the Bedrock responder alone, with fixed ports.
var mbeOnly = Options{Protocols: map[string]map[string]any{
	"bedrock": {"ipv4_port": mbeIPv4Port, "ipv6_port": mbeIPv6Port},
}}

// mbeState is what the Bedrock checks feed: non-ASCII text in the name, the
// map (the sub-motd) and the game mode. No § (both clients read Minecraft
// formatting codes) and no runs of spaces (gamedig collapses them).
type mbeState struct {
	name, mapName, version, gamemode string
	players, max                     int
}

func (s mbeState) doc() map[string]any {
	players := map[string]any{}
	for i := 0; i < s.players; i++ {
		players[strconv.Itoa(i+1)] = map[string]any{"name": fmt.Sprintf("Player%d", i)}
	}
	return map[string]any{
		"name": s.name, "map": s.mapName, "version": s.version, "gamemode": s.gamemode,
		"max_players": s.max, "players": players,
	}
}

// mbeWant is what every client must show: the fed state, with each ';'
// replaced by ':'.
type mbeWant struct {
	mbeState
	protocol int
}

// TestBedrockClients feeds a state and asks it through both real Bedrock
// status clients; then a state with ';' in every text field, which both
// must show with ':' in its place and every later field where it was.
func TestBedrockClients(t *testing.T) {
	d := StartDaemon(t, mbeOnly)
	st := mbeState{name: "queryd interop — Zoë's Bedrock 日本語", mapName: "Ελληνικά world", version: "1.21.50",
		gamemode: "Créatif", players: 8, max: 20}
	d.Replace(t, st.doc())
	want := mbeWant{st, 766}
	t.Run("npm_minecraft-server-util_statusBedrock", func(t *testing.T) {
		clientCheck(t, "npm_minecraft-server-util_statusBedrock", "socket")
		mbeMcsu(t, "127.0.0.1", d.UDPPort, want)
	})
	t.Run("gamedig_mbe", func(t *testing.T) { clientCheck(t, "gamedig_mbe", "socket"); mbeGamedig(t, d.UDPAddr, want) })

	semi := mbeState{name: "A;B;;C", mapName: "map;x", version: "1;21", gamemode: "Sur;vival", players: 3, max: 30}
	d.Replace(t, semi.doc())
	want = mbeWant{mbeState{name: "A:B::C", mapName: "map:x", version: "1:21", gamemode: "Sur:vival", players: 3, max: 30}, 766}
	t.Run("semicolons_minecraft-server-util", func(t *testing.T) {
		clientCheck(t, "npm_minecraft-server-util_statusBedrock", "socket")
		mbeMcsu(t, "127.0.0.1", d.UDPPort, want)
	})
	t.Run("semicolons_gamedig", func(t *testing.T) { clientCheck(t, "gamedig_mbe", "socket"); mbeGamedig(t, d.UDPAddr, want) })
}

// mbeMcsu runs npm minecraft-server-util statusBedrock (enableSRV false).
// It joins the motd and the sub-motd with a newline in motd.clean (its
// motd.raw adds §f colour codes of its own around the motd).
func mbeMcsu(t *testing.T, host string, port int, want mbeWant) {
	r := RunNode(t, 30*time.Second, "mcutil.mjs", "bedrock", host, strconv.Itoa(port))
	if r.Err != nil {
		t.Fatalf("minecraft-server-util statusBedrock: %v", r.Err)
	}
	var res struct {
		Edition string `json:"edition"`
		MOTD    struct {
			Clean string `json:"clean"`
		} `json:"motd"`
		Version struct {
			Name     string `json:"name"`
			Protocol int    `json:"protocol"`
		} `json:"version"`
		Players struct {
			Online int `json:"online"`
			Max    int `json:"max"`
		} `json:"players"`
		ServerGUID string `json:"serverGUID"`
		ServerID   string `json:"serverID"`
		GameMode   string `json:"gameMode"`
		GameModeID int    `json:"gameModeID"`
		PortIPv4   int    `json:"portIPv4"`
		PortIPv6   int    `json:"portIPv6"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("minecraft-server-util output: %v\n%s", err, r.Stdout)
	}
	gs4Eq(t, "edition", res.Edition, "MCPE")
	gs4Eq(t, "motd.clean", res.MOTD.Clean, want.name+"\n"+want.mapName)
	gs4Eq(t, "version.name", res.Version.Name, want.version)
	gs4Eq(t, "version.protocol", res.Version.Protocol, want.protocol)
	gs4Eq(t, "players.online", res.Players.Online, want.players)
	gs4Eq(t, "players.max", res.Players.Max, want.max)
	gs4Eq(t, "serverID", res.ServerID, res.ServerGUID) // the header's GUID (read signed) is the status's server id
	if g, err := strconv.ParseUint(res.ServerGUID, 10, 64); err != nil || len(res.ServerGUID) != 19 || g > 1<<63-1 {
		t.Errorf("serverGUID %q: want 19 digits, positive as an i64 (%v)", res.ServerGUID, err)
	}
	gs4Eq(t, "gameMode", res.GameMode, want.gamemode)
	gs4Eq(t, "gameModeID", res.GameModeID, 1)
	gs4Eq(t, "portIPv4", res.PortIPv4, mbeIPv4Port)
	gs4Eq(t, "portIPv6", res.PortIPv6, mbeIPv6Port)
}

// mbeGamedig runs npm gamedig, type mbe (protocol minecraft: it also tries
// Java's TCP status and GameSpy4 on the port, which this daemon does not
// answer, then takes name, map, counts and version from the pong).
func mbeGamedig(t *testing.T, addr string, want mbeWant) {
	r := RunGamedig(t, "mbe", addr, nil)
	if r.Err != nil {
		t.Fatalf("gamedig: %v", r.Err)
	}
	var g struct {
		Name       string `json:"name"`
		Map        string `json:"map"`
		NumPlayers int    `json:"numplayers"`
		MaxPlayers int    `json:"maxplayers"`
		Version    string `json:"version"`
		Raw        struct {
			Bedrock struct {
				Name       string `json:"name"`
				Map        string `json:"map"`
				NumPlayers int    `json:"numplayers"`
				MaxPlayers int    `json:"maxplayers"`
				Raw        struct {
					Edition         string `json:"edition"`
					ProtocolVersion string `json:"protocolVersion"`
					MCVersion       string `json:"mcVersion"`
					ServerID        string `json:"serverId"`
					GameMode        string `json:"gameMode"`
					NintendoOnly    bool   `json:"nintendoOnly"`
					IPv4Port        string `json:"ipv4Port"`
					IPv6Port        string `json:"ipv6Port"`
				} `json:"raw"`
			} `json:"bedrock"`
		} `json:"raw"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &g); err != nil {
		t.Fatalf("gamedig output: %v\n%s", err, r.Stdout)
	}
	gs4Eq(t, "name", g.Name, want.name)
	gs4Eq(t, "map", g.Map, want.mapName)
	gs4Eq(t, "numplayers", g.NumPlayers, want.players)
	gs4Eq(t, "maxplayers", g.MaxPlayers, want.max)
	gs4Eq(t, "version", g.Version, want.version)
	b := g.Raw.Bedrock
	gs4Eq(t, "raw.bedrock.name", b.Name, want.name)
	gs4Eq(t, "raw.bedrock.map", b.Map, want.mapName)
	gs4Eq(t, "raw.bedrock.raw.edition", b.Raw.Edition, "MCPE")
	gs4Eq(t, "raw.bedrock.raw.protocolVersion", b.Raw.ProtocolVersion, strconv.Itoa(want.protocol))
	gs4Eq(t, "raw.bedrock.raw.mcVersion", b.Raw.MCVersion, want.version)
	gs4Eq(t, "raw.bedrock.raw.gameMode", b.Raw.GameMode, want.gamemode)
	gs4Eq(t, "raw.bedrock.raw.nintendoOnly (the game mode number 1)", b.Raw.NintendoOnly, true)
	gs4Eq(t, "raw.bedrock.raw.ipv4Port", b.Raw.IPv4Port, strconv.Itoa(mbeIPv4Port))
	gs4Eq(t, "raw.bedrock.raw.ipv6Port", b.Raw.IPv6Port, strconv.Itoa(mbeIPv6Port))
	if len(b.Raw.ServerID) != 19 {
		t.Errorf("raw.bedrock.raw.serverId %q: want the 19-digit server GUID", b.Raw.ServerID)
	}
}

package interop

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SQP's wire constants, as sqp/doc.go documents them (the suite does not
// import the package it checks).
const (
	sqpInfo, sqpRules, sqpPlayers, sqpTeams = 0x01, 0x02, 0x04, 0x08
	sqpMaxPacket                            = 1472
	sqpHeaderLen                            = 11
)

// sqpServerInfo is sqpprobe's server_info.
type sqpServerInfo struct {
	CurrentPlayers uint16 `json:"current_players"`
	MaxPlayers     uint16 `json:"max_players"`
	ServerName     string `json:"server_name"`
	GameType       string `json:"game_type"`
	BuildID        string `json:"build_id"`
	Map            string `json:"map"`
	Port           uint16 `json:"port"`
}

// sqpRuleJSON is how a rule value must come out of go-svrquery, by
// sqp/doc.go's rule: "true"/"false" as the numbers 1/0 (u8), plain
// non-negative integers below 2^64 as numbers, anything else as a string.
func sqpRuleJSON(v string) string {
	switch v {
	case "true":
		return "1"
	case "false":
		return "0"
	}
	if n, err := strconv.ParseUint(v, 10, 64); err == nil && strconv.FormatUint(n, 10) == v {
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// sqpGameType is [sqp] game_type in the SQP tests (the state has no
// gamemode).
const sqpGameType = "interop game type"

// sqpOnly enables the SQP responder.
var sqpOnly = Options{Protocols: map[string]map[string]any{"sqp": {"game_type": sqpGameType}}}

// sqpChunks are the chunks sqpprobe can ask for, by its names.
var sqpChunks = []struct {
	bit  byte
	name string
}{{sqpInfo, "info"}, {sqpRules, "rules"}, {sqpPlayers, "players"}, {sqpTeams, "teams"}}

// sqpProbeRel is where sqpprobe (a build of Unity/Multiplay's go-svrquery
// client, not on the Go module proxy) lies beside the repository.
const sqpProbeRel = "shared/clients/sqpprobe/sqpprobe"

// needSQPProbe returns the sqpprobe binary: $QUERYD_SQPPROBE, else
// ../shared/clients/sqpprobe/sqpprobe from the repository or any folder
// above it. Without it the test is skipped, saying so: the repository must
// build and test without ../shared.
func needSQPProbe(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("QUERYD_SQPPROBE"); p != "" {
		return p
	}
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(filepath.Dir(dir), sqpProbeRel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	t.Skipf("SKIP: sqpprobe (go-svrquery's SQP client) not found: set QUERYD_SQPPROBE or put it at ../%s beside the repository", sqpProbeRel)
	return ""
}

// chunkNames returns sqpprobe's -chunks value for chunks.
func chunkNames(chunks byte) string {
	var names []string
	for _, c := range sqpChunks {
		if chunks&c.bit != 0 {
			names = append(names, c.name)
		}
	}
	return strings.Join(names, ",")
}

// sqpProbeResult is sqpprobe's JSON: go-svrquery's QueryResponse.
type sqpProbeResult struct {
	Version    int                          `json:"version"`
	ServerInfo *sqpServerInfo               `json:"server_info"`
	RulesRaw   map[string]json.RawMessage   `json:"server_rules"`
	Players    []map[string]json.RawMessage `json:"player_info"`
	keys       map[string]json.RawMessage
}

// runSQPProbe asks addr for chunks with sqpprobe and decodes its output.
func runSQPProbe(t *testing.T, bin, addr string, chunks byte) sqpProbeResult {
	t.Helper()
	res := RunCmd(t, 10*time.Second, "", bin, "-addr", addr, "-chunks", chunkNames(chunks), "-timeout", "3s")
	if res.Err != nil {
		t.Fatalf("sqpprobe: %v\n%s", res.Err, res.Stderr)
	}
	var out sqpProbeResult
	dec := json.NewDecoder(strings.NewReader(res.Stdout))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("sqpprobe output: %v\n%s", err, res.Stdout)
	}
	if err := json.Unmarshal([]byte(res.Stdout), &out.keys); err != nil {
		t.Fatal(err)
	}
	return out
}

// sqpState returns st with n players: its own, then more named
// "Extra Player NNN" with ids from 2000, scores from -100 and pings.
func sqpState(st TestState, n int) TestState {
	for i := 0; len(st.Players) < n; i++ {
		st.Players = append(st.Players, TestPlayer{ID: uint32(2000 + i), Name: fmt.Sprintf("Extra Player %03d", i), Score: int32(i - 100), Ping: i % 500})
	}
	st.Players = st.Players[:n]
	return st
}

// checkSQPProbe compares sqpprobe's answer to chunks with the fed state:
// every value of every chunk asked for, and no chunk not asked for. The
// rules and players listed must be the state's first ones (in key order and
// in id order, the order queryd first saw them); it returns how many.
func checkSQPProbe(t *testing.T, out sqpProbeResult, chunks byte, st TestState, port int) (rules, players int) {
	t.Helper()
	for _, c := range []struct {
		bit byte
		key string
	}{{sqpInfo, "server_info"}, {sqpRules, "server_rules"}, {sqpPlayers, "player_info"}, {sqpTeams, "team_info"}} {
		if _, ok := out.keys[c.key]; ok != (chunks&c.bit != 0) {
			t.Errorf("%s: in the answer %v, asked %v", c.key, ok, chunks&c.bit != 0)
		}
	}
	if out.Version != 1 {
		t.Errorf("version %d", out.Version)
	}
	if chunks&sqpInfo != 0 {
		want := sqpServerInfo{CurrentPlayers: uint16(len(st.Players)), MaxPlayers: uint16(st.MaxPlayers),
			ServerName: st.Name, GameType: sqpGameType, BuildID: st.Version, Map: st.Map, Port: uint16(port)}
		if out.ServerInfo == nil || *out.ServerInfo != want {
			t.Errorf("server_info %+v\nwant %+v", out.ServerInfo, want)
		}
	}
	if chunks&sqpRules != 0 {
		rules = checkSQPRules(t, out.RulesRaw, st.Rules)
	}
	if chunks&sqpPlayers != 0 {
		players = checkSQPPlayers(t, out.Players, st.Players)
	}
	if chunks&sqpTeams != 0 && string(out.keys["team_info"]) != "null" {
		t.Errorf("team_info %s, want none", out.keys["team_info"])
	}
	return rules, players
}

// checkSQPRules checks that got holds the first of want's rules in key
// order, each with the value of its type (numbers for booleans and plain
// integers, strings otherwise), and returns how many.
func checkSQPRules(t *testing.T, got map[string]json.RawMessage, want map[string]string) int {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		raw, ok := got[k]
		if !ok {
			if len(got) != i {
				t.Errorf("rules: %d listed, but not %q (the %dth in key order)", len(got), k, i)
			}
			break
		}
		wantJSON := sqpRuleJSON(want[k])
		if string(raw) != wantJSON { // both Go's encoding/json: the same escapes
			t.Errorf("rule %q: %s, want %s", k, raw, wantJSON)
		}
	}
	return len(got)
}

// checkSQPPlayers checks that got holds the first of want's players in id
// order, with name, score (the int32's bits as uint32) and ping, and
// returns how many.
func checkSQPPlayers(t *testing.T, got []map[string]json.RawMessage, want []TestPlayer) int {
	t.Helper()
	want = append([]TestPlayer{}, want...)
	sort.Slice(want, func(i, j int) bool { return want[i].ID < want[j].ID })
	if len(got) > len(want) {
		t.Fatalf("%d players, %d fed", len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		var name string
		var score, ping uint64
		if json.Unmarshal(g["name"], &name) != nil || json.Unmarshal(g["score"], &score) != nil || json.Unmarshal(g["ping"], &ping) != nil || len(g) != 3 {
			t.Fatalf("player %d: %v", i, g)
		}
		if name != w.Name || uint32(score) != uint32(w.Score) || ping != uint64(w.Ping) {
			t.Errorf("player %d: %q score %d ping %d; want %q %d (%d) %d", i, name, score, ping, w.Name, uint32(w.Score), w.Score, w.Ping)
		}
	}
	return len(got)
}

// TestSQPClients feeds the shared rich state (48 players, 220 rules) and
// asks it with go-svrquery's client for every combination of the chunks it
// knows: every value matches, and the whole state fits one reply.
func TestSQPClients(t *testing.T) {
	clientPlan(t, "socket", "sqpprobe")
	bin := needSQPProbe(t)
	d := StartDaemon(t, sqpOnly)
	st := RichState()
	d.Replace(t, st.Doc())
	for chunks := byte(1); chunks < 16; chunks++ {
		t.Run("sqpprobe_"+strings.ReplaceAll(chunkNames(chunks), ",", "+"), func(t *testing.T) {
			clientCheck(t, "sqpprobe", "socket")
			rules, players := checkSQPProbe(t, runSQPProbe(t, bin, d.UDPAddr, chunks), chunks, st, d.UDPPort)
			if chunks&sqpRules != 0 && rules != len(st.Rules) || chunks&sqpPlayers != 0 && players != len(st.Players) {
				t.Errorf("%d rules and %d players listed; %d and %d fed", rules, players, len(st.Rules), len(st.Players))
			}
		})
	}
}

// TestSQPManyPlayers: 255 players beside the fixture's 220 rules. Every
// combination is read by go-svrquery's client from a reply of several
// packets; all 255 players and all 220 rules are listed in every reply
// that asks for them (they fit one reply: 32,142 bytes of chunks at most).
func TestSQPManyPlayers(t *testing.T) {
	clientPlan(t, "socket", "sqpprobe")
	bin := needSQPProbe(t)
	d := StartDaemon(t, sqpOnly)
	st := sqpState(RichState(), 255)
	d.Replace(t, st.Doc())
	for chunks := byte(1); chunks < 16; chunks++ {
		t.Run("sqpprobe_"+strings.ReplaceAll(chunkNames(chunks), ",", "+"), func(t *testing.T) {
			clientCheck(t, "sqpprobe", "socket")
			rules, players := checkSQPProbe(t, runSQPProbe(t, bin, d.UDPAddr, chunks), chunks, st, d.UDPPort)
			if chunks&sqpPlayers != 0 && players != 255 {
				t.Errorf("%d players listed, want 255", players)
			}
			if chunks&sqpRules != 0 && rules != len(st.Rules) {
				t.Errorf("%d rules listed, want all %d", rules, len(st.Rules))
			}
			if chunks == 7 {
				t.Logf("info+rules+players: %d rules of %d and %d players", rules, len(st.Rules), players)
			}
		})
	}
	t.Run("raw_packets", func(t *testing.T) { sqpRawPackets(t, d.UDPAddr, 255) })
}

// sqpRawPackets asks for ServerInfo and PlayerInfo over a plain socket and
// checks the packets themselves: several, each at most 1,472 bytes, every
// one but the last exactly that, numbered 0 to last, with the token.
func sqpRawPackets(t *testing.T, addr string, players int) {
	c := dialRaw(t, addr)
	got := c.ask(t, []byte{0, 0, 0, 0, 0})
	if len(got) != 1 || len(got[0]) != 5 || got[0][0] != 0 {
		t.Fatalf("challenge reply %s", hexDatagrams(got))
	}
	tok := got[0][1:5]
	query := append(append([]byte{1}, tok...), 0, 1, sqpInfo|sqpPlayers)
	pkts := c.ask(t, query)
	if len(pkts) < 2 {
		t.Fatalf("%d packets for %d players", len(pkts), players)
	}
	sizes := make([]string, len(pkts))
	var payload []byte
	for i, p := range pkts {
		want := append(append([]byte{1}, tok...), 0, 1, byte(i), byte(len(pkts)-1))
		want = binary.BigEndian.AppendUint16(want, uint16(len(p)-sqpHeaderLen))
		if len(p) < sqpHeaderLen || !bytes.Equal(p[:sqpHeaderLen], want) || len(p) > sqpMaxPacket || i < len(pkts)-1 && len(p) != sqpMaxPacket {
			t.Fatalf("packet %d (%d bytes): header % x, want % x", i, len(p), p[:min(len(p), sqpHeaderLen)], want)
		}
		sizes[i] = strconv.Itoa(len(p))
		payload = append(payload, p[sqpHeaderLen:]...)
	}
	// The ServerInfo chunk, then the PlayerInfo chunk whose count is every player.
	info := int(binary.BigEndian.Uint32(payload))
	rest := payload[4+info:]
	if n := int(binary.BigEndian.Uint32(rest)); n != len(rest)-4 || int(binary.BigEndian.Uint16(rest[4:])) != players {
		t.Fatalf("PlayerInfo chunk of %d bytes (%d follow) for %d players", n, len(rest)-4, binary.BigEndian.Uint16(rest[4:]))
	}
	t.Logf("%d players: %d packets of %s bytes", players, len(pkts), strings.Join(sizes, ", "))
}

// TestSQPQueryCommand: `queryd query -proto sqp` reads the rich state.
func TestSQPQueryCommand(t *testing.T) {
	clientCheck(t, "queryd_query_sqp", "socket")
	d := StartDaemon(t, sqpOnly)
	st := RichState()
	d.Replace(t, st.Doc())
	res := RunCmd(t, 10*time.Second, "", querydBin, "query", "-proto", "sqp", d.UDPAddr)
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Stderr)
	}
	var out struct {
		Info    sqpServerInfo                `json:"server_info"`
		Rules   map[string]any               `json:"rules"`
		Players []map[string]any             `json:"players"`
		Teams   []map[string]json.RawMessage `json:"teams"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, res.Stdout)
	}
	if out.Info.ServerName != st.Name || len(out.Rules) != len(st.Rules) || len(out.Players) != len(st.Players) || out.Teams == nil || len(out.Teams) != 0 {
		t.Fatalf("queryd query -proto sqp: %+v, %d rules, %d players, teams %v", out.Info, len(out.Rules), len(out.Players), out.Teams)
	}
}

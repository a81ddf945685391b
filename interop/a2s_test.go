package interop

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	rfa2s "github.com/rumblefrog/go-a2s"
	wma2s "github.com/woozymasta/a2s/pkg/a2s"
)

// a2sOnly enables the A2S responder with its defaults (app id 480,
// info_challenge and compat on).
var a2sOnly = Options{Protocols: map[string]map[string]any{"a2s": nil}}

// TestA2SClients feeds the rich state and asks it through every real A2S
// client; each client is one subtest.
func TestA2SClients(t *testing.T) {
	d := StartDaemon(t, a2sOnly)
	st := RichState()
	d.Replace(t, st.Doc())

	t.Run("daemon_splits_rules", func(t *testing.T) { checkRulesSplit(t, d.UDPAddr, st) })
	t.Run("qstat", func(t *testing.T) { clientCheck(t, "qstat", "socket"); checkQstat(t, d.UDPAddr, st) })
	t.Run("gamedig_valve", func(t *testing.T) { clientCheck(t, "gamedig_valve", "socket"); checkGamedigValve(t, d.UDPAddr, st) })
	t.Run("go_rumblefrog_go-a2s", func(t *testing.T) {
		clientCheck(t, "go_rumblefrog_go-a2s", "socket")
		checkRumblefrog(t, d.UDPAddr, st)
	})
	t.Run("go_woozymasta_a2s", func(t *testing.T) { clientCheck(t, "go_woozymasta_a2s", "socket"); checkWoozymasta(t, d.UDPAddr, st) })
	t.Run("splits_sent_with_gso", func(t *testing.T) { checkSplitsSentWithGSO(t, d) })
}

// checkRulesSplit asks A2S_RULES by hand and checks that the reply really
// comes as Source split fragments: more than one, each at most 1,400 bytes,
// one id with bits 31 and 15 clear, numbered 0..n-1, size field 1,248, and
// the reassembled reply lists every rule.
func checkRulesSplit(t *testing.T, addr string, st TestState) {
	c := dialRaw(t, addr)
	tok := c.challenge(t, []byte{0xFF, 0xFF, 0xFF, 0xFF, 'V', 0xFF, 0xFF, 0xFF, 0xFF})
	frags := c.ask(t, append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'V'}, tok...))
	payload := reassemble(t, frags)
	if len(frags) < 2 || len(payload) <= 1400 {
		t.Fatalf("A2S_RULES came in %d datagram(s), %d bytes: want a split reply over 1,400 bytes", len(frags), len(payload))
	}
	if len(frags) > 15 {
		t.Errorf("A2S_RULES took %d fragments; the test state should stay under 16 (woozymasta reads 4 bits)", len(frags))
	}
	if string(payload[:5]) != "\xFF\xFF\xFF\xFFE" {
		t.Fatalf("reassembled RULES starts % X, want FF FF FF FF 45", payload[:5])
	}
	if n := int(payload[5]) | int(payload[6])<<8; n != len(st.Rules) {
		t.Errorf("RULES count %d, want %d", n, len(st.Rules))
	}
	t.Logf("A2S_RULES: %d bytes in %d fragments", len(payload), len(frags))
}

// qstatServer is the part of `quakestat -json` output the checks read.
type qstatServer struct {
	Status     string            `json:"status"`
	Name       string            `json:"name"`
	Map        string            `json:"map"`
	NumPlayers int               `json:"numplayers"`
	MaxPlayers int               `json:"maxplayers"`
	Rules      map[string]string `json:"rules"`
	Players    []struct {
		Name  string `json:"name"`
		Score int64  `json:"score"`
	} `json:"players"`
}

// checkQstat runs Debian's qstat. It exits 0 even when nothing answers, so
// only its output counts. With -nnx it drops every non-ASCII byte (its JSON
// output cannot carry them), so names are compared with those bytes removed.
func checkQstat(t *testing.T, addr string, st TestState) {
	NeedCommand(t, "quakestat")
	r := RunCmd(t, 30*time.Second, "", "quakestat", "-a2s", addr, "-R", "-P", "-json", "-nnx")
	if r.Err != nil {
		t.Fatalf("qstat: %v", r.Err)
	}
	var servers []qstatServer
	if err := json.Unmarshal([]byte(r.Stdout), &servers); err != nil || len(servers) != 1 {
		t.Fatalf("qstat output is not one server (%v):\n%s", err, r.Stdout)
	}
	s := servers[0]
	if s.Status != "online" {
		t.Fatalf("qstat status %q, want online:\n%s", s.Status, r.Stdout)
	}
	checkEq(t, "name", s.Name, asciiOnly(st.Name))
	checkEq(t, "map", s.Map, st.Map)
	checkEq(t, "numplayers", s.NumPlayers, len(st.Players))
	checkEq(t, "maxplayers", s.MaxPlayers, st.MaxPlayers)
	var names, wantNames []string
	scores := map[string]int64{}
	for _, p := range s.Players {
		names = append(names, p.Name)
		scores[p.Name] = p.Score
	}
	seen := map[string]int{} // several names lose all their letters: "日本語" and "" both show as ""
	for _, p := range st.Players {
		wantNames = append(wantNames, asciiOnly(p.Name))
		seen[asciiOnly(p.Name)]++
	}
	checkSameNames(t, "qstat players (non-ASCII bytes dropped)", names, wantNames)
	for _, p := range st.Players {
		if got, ok := scores[asciiOnly(p.Name)]; ok && seen[asciiOnly(p.Name)] == 1 && got != int64(p.Score) {
			t.Errorf("qstat score of %q: %d, want %d", p.Name, got, p.Score)
		}
	}
	want := map[string]string{}
	for k, v := range st.Rules {
		want[k] = asciiOnly(v)
	}
	// qstat adds INFO fields (protocol, gamedir, bots, …) to the rules.
	checkRules(t, "qstat", s.Rules, want, true)
	checkEq(t, "qstat rule bots (from INFO)", s.Rules["bots"], fmt.Sprint(len(st.Bots())))
	checkEq(t, "qstat rule gamedir (from INFO)", s.Rules["gamedir"], st.Folder)
}

// gamedigResult is the part of gamedig's result the checks read.
type gamedigResult struct {
	Name       string `json:"name"`
	Map        string `json:"map"`
	NumPlayers int    `json:"numplayers"`
	MaxPlayers int    `json:"maxplayers"`
	Players    []struct {
		Name string `json:"name"`
	} `json:"players"`
	Bots []struct {
		Name string `json:"name"`
	} `json:"bots"`
	Raw struct {
		AppID   int `json:"appId"`
		NumBots int `json:"numbots"`
		Players []struct {
			Name  string  `json:"name"`
			Score int32   `json:"score"`
			Time  float64 `json:"time"`
		} `json:"players"`
		Rules map[string]string `json:"rules"`
	} `json:"raw"`
}

// checkGamedigValve runs npm gamedig (protocol valve). It calls the N
// players with the longest connection times bots, N being INFO's bot count:
// the test state gives its bots the longest times, so gamedig's bots must be
// exactly them.
func checkGamedigValve(t *testing.T, addr string, st TestState) {
	r := RunGamedig(t, "valve", addr, map[string]any{"requestRules": true, "requestRulesRequired": true, "requestPlayersRequired": true})
	if r.Err != nil {
		t.Fatalf("gamedig: %v", r.Err)
	}
	var g gamedigResult
	if err := json.Unmarshal([]byte(r.Stdout), &g); err != nil {
		t.Fatalf("gamedig output: %v\n%s", err, r.Stdout)
	}
	checkEq(t, "name", g.Name, st.Name)
	checkEq(t, "map", g.Map, st.Map)
	checkEq(t, "numplayers", g.NumPlayers, len(st.Players))
	checkEq(t, "maxplayers", g.MaxPlayers, st.MaxPlayers)
	checkEq(t, "raw.appId", g.Raw.AppID, 480)
	checkEq(t, "raw.numbots", g.Raw.NumBots, len(st.Bots()))
	var all, bots, wantBots []string
	for _, p := range g.Players {
		all = append(all, p.Name)
	}
	for _, p := range g.Bots {
		all = append(all, p.Name)
		bots = append(bots, p.Name)
	}
	for _, p := range st.Bots() {
		wantBots = append(wantBots, p.Name)
	}
	checkSameNames(t, "gamedig players+bots", all, st.PlayerNames())
	checkSameNames(t, "gamedig bots", bots, wantBots)
	scores := map[string]int32{}
	for _, p := range g.Raw.Players {
		scores[p.Name] = p.Score
	}
	checkScores(t, "gamedig", scores, st, func(s int32) int32 { return s })
	checkRules(t, "gamedig", g.Raw.Rules, st.Rules, false)
}

// checkRumblefrog uses github.com/rumblefrog/go-a2s (sends -1 first for
// PLAYER and RULES, reads at most 1,400 bytes a datagram).
func checkRumblefrog(t *testing.T, addr string, st TestState) {
	c, err := rfa2s.NewClient(addr, rfa2s.TimeoutOption(3*time.Second))
	if err != nil {
		t.Fatalf("go-a2s client: %v", err)
	}
	defer c.Close()
	info, err := c.QueryInfo()
	if err != nil {
		t.Fatalf("go-a2s QueryInfo: %v", err)
	}
	checkEq(t, "name", info.Name, st.Name)
	checkEq(t, "map", info.Map, st.Map)
	checkEq(t, "folder", info.Folder, st.Folder)
	checkEq(t, "game", info.Game, st.Game)
	checkEq(t, "version", info.Version, st.Version)
	checkEq(t, "players", int(info.Players), len(st.Players))
	checkEq(t, "max players", int(info.MaxPlayers), st.MaxPlayers)
	checkEq(t, "bots", int(info.Bots), len(st.Bots()))
	checkEq(t, "app id", int(info.ID), 480)
	pl, err := c.QueryPlayer()
	if err != nil {
		t.Fatalf("go-a2s QueryPlayer: %v", err)
	}
	var names []string
	scores := map[string]int32{}
	durations := map[string]float32{}
	for _, p := range pl.Players {
		names = append(names, p.Name)
		scores[p.Name] = p.Score
		durations[p.Name] = p.Duration
	}
	checkSameNames(t, "go-a2s players", names, st.PlayerNames())
	checkDurations(t, "go-a2s", durations, st)
	checkScores(t, "go-a2s", scores, st, func(s int32) int32 { return s })
	rules, err := c.QueryRules()
	if err != nil {
		t.Fatalf("go-a2s QueryRules: %v", err)
	}
	checkEq(t, "rules count", int(rules.Count), len(st.Rules))
	checkRules(t, "go-a2s", rules.Rules, st.Rules, false)
}

// checkWoozymasta uses github.com/woozymasta/a2s (needs the EDF byte, reads
// scores as unsigned, reads the fragment count from 4 bits).
func checkWoozymasta(t *testing.T, addr string, st TestState) {
	c, err := wma2s.NewWithString(addr)
	if err != nil {
		t.Fatalf("woozymasta client: %v", err)
	}
	defer c.Close()
	c.SetDeadlineTimeout(3)
	info, err := c.GetInfo()
	if err != nil {
		t.Fatalf("woozymasta GetInfo: %v", err)
	}
	checkEq(t, "name", info.Name, st.Name)
	checkEq(t, "map", info.Map, st.Map)
	checkEq(t, "folder", info.Folder, st.Folder)
	checkEq(t, "game", info.Game, st.Game)
	checkEq(t, "version", info.Version, st.Version)
	checkEq(t, "players", int(info.Players), len(st.Players))
	checkEq(t, "max players", int(info.MaxPlayers), st.MaxPlayers)
	checkEq(t, "bots", int(info.Bots), len(st.Bots()))
	players, err := c.GetPlayers()
	if err != nil {
		t.Fatalf("woozymasta GetPlayers: %v", err)
	}
	var names []string
	scores := map[string]int32{}
	for _, p := range *players {
		names = append(names, p.Name)
		scores[p.Name] = int32(p.Score)
	}
	// The library lists the empty name too; only its CLI's JSON output
	// (omitempty) hides it.
	checkSameNames(t, "woozymasta players", names, st.PlayerNames())
	// Scores come as uint32: the int32 bits are kept.
	checkScores(t, "woozymasta", scores, st, func(s int32) int32 { return s })
	rules, err := c.GetRules()
	if err != nil {
		t.Fatalf("woozymasta GetRules: %v", err)
	}
	checkRules(t, "woozymasta", rules, st.Rules, false)
}

// TestA2SChallenge checks the bytes an unproven source gets, and the
// steamlogger client's compat exchange.
func TestA2SChallenge(t *testing.T) {
	d := StartDaemon(t, a2sOnly)
	st := RichState()
	d.Replace(t, st.Doc())
	infoReq := []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")

	t.Run("unproven_info_gets_9_byte_challenge", func(t *testing.T) {
		c := dialRaw(t, d.UDPAddr)
		got := c.ask(t, infoReq)
		if len(got) != 1 || len(got[0]) != 9 || string(got[0][:5]) != "\xFF\xFF\xFF\xFFA" {
			t.Fatalf("unproven A2S_INFO (%d bytes) got %s; want one 9-byte FF FF FF FF 41 <token>", len(infoReq), hexDatagrams(got))
		}
		if tok := string(got[0][5:]); tok == "\x00\x00\x00\x00" || tok == "\xFF\xFF\xFF\xFF" {
			t.Errorf("challenge token % X is reserved", got[0][5:])
		}
		info := c.ask(t, append(append([]byte{}, infoReq...), got[0][5:]...))
		checkInfoReply(t, info, st.Name)
	})

	t.Run("steamlogger_compat", func(t *testing.T) {
		c := dialRaw(t, d.UDPAddr)
		got := c.ask(t, []byte("\xFF\xFF\xFF\xFFTSOURCE\x00"))
		if len(got) != 1 || len(got[0]) != 9 || string(got[0][:5]) != "\xFF\xFF\xFF\xFFA" {
			t.Fatalf(`"SOURCE\0" request got %s; want one 9-byte challenge`, hexDatagrams(got))
		}
		retry := append([]byte("\xFF\xFF\xFF\xFFA"), got[0][5:]...)
		checkInfoReply(t, c.ask(t, retry), st.Name)
	})
}

// TestA2SFeedChange changes the state through the feed (a merge patch) and
// checks that clients see the change.
func TestA2SFeedChange(t *testing.T) {
	d := StartDaemon(t, a2sOnly)
	st := RichState()
	d.Replace(t, st.Doc())
	f := d.Feed(t)
	gone := st.Players[0]
	patch := map[string]any{
		"name": "queryd interop, renamed",
		"map":  "cs_changed",
		"players": map[string]any{
			fmt.Sprint(gone.ID): nil,
			"4242":              map[string]any{"name": "Newcomer Ñandú", "score": -17, "ping": 5},
		},
		"rules": map[string]any{"sv_interop_001": "changed", "sv_interop_002": nil},
	}
	if _, err := f.Patch(patch); err != nil {
		t.Fatalf("feed patch: %v", err)
	}
	var want []string
	for _, n := range st.PlayerNames() {
		if n != gone.Name {
			want = append(want, n)
		}
	}
	want = append(want, "Newcomer Ñandú")

	t.Run("go_rumblefrog_go-a2s", func(t *testing.T) {
		clientCheck(t, "go_rumblefrog_go-a2s", "socket")
		c, err := rfa2s.NewClient(d.UDPAddr, rfa2s.TimeoutOption(3*time.Second))
		if err != nil {
			t.Fatalf("go-a2s client: %v", err)
		}
		defer c.Close()
		info, err := c.QueryInfo()
		if err != nil {
			t.Fatalf("QueryInfo: %v", err)
		}
		checkEq(t, "name", info.Name, "queryd interop, renamed")
		checkEq(t, "map", info.Map, "cs_changed")
		checkEq(t, "players", int(info.Players), len(want))
		pl, err := c.QueryPlayer()
		if err != nil {
			t.Fatalf("QueryPlayer: %v", err)
		}
		var names []string
		for _, p := range pl.Players {
			names = append(names, p.Name)
		}
		checkSameNames(t, "players after the patch", names, want)
		rules, err := c.QueryRules()
		if err != nil {
			t.Fatalf("QueryRules: %v", err)
		}
		checkEq(t, "rules count", int(rules.Count), len(st.Rules)-1)
		checkEq(t, "sv_interop_001", rules.Rules["sv_interop_001"], "changed")
		if v, ok := rules.Rules["sv_interop_002"]; ok {
			t.Errorf("removed rule sv_interop_002 still listed as %q", v)
		}
	})

	t.Run("gamedig_valve", func(t *testing.T) {
		clientCheck(t, "gamedig_valve", "socket")
		r := RunGamedig(t, "valve", d.UDPAddr, nil)
		if r.Err != nil {
			t.Fatalf("gamedig: %v", r.Err)
		}
		var g gamedigResult
		if err := json.Unmarshal([]byte(r.Stdout), &g); err != nil {
			t.Fatalf("gamedig output: %v\n%s", err, r.Stdout)
		}
		checkEq(t, "name", g.Name, "queryd interop, renamed")
		checkEq(t, "map", g.Map, "cs_changed")
		checkEq(t, "numplayers", g.NumPlayers, len(want))
	})
}

// checkInfoReply asserts that got is one A2S_INFO reply naming the server.
func checkInfoReply(t *testing.T, got [][]byte, name string) {
	t.Helper()
	if len(got) != 1 || len(got[0]) < 7 || string(got[0][:5]) != "\xFF\xFF\xFF\xFFI" {
		t.Fatalf("got %s; want one A2S_INFO reply (FF FF FF FF 49 …)", hexDatagrams(got))
	}
	body := got[0][6:] // after the protocol byte
	if end := strings.IndexByte(string(body), 0); end < 0 || string(body[:end]) != name {
		t.Errorf("INFO reply name %q, want %q", body[:max(end, 0)], name)
	}
}

func checkEq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// checkSameNames compares two lists of names as multisets and reports what
// is missing and what is unexpected.
func checkSameNames(t *testing.T, what string, got, want []string) {
	t.Helper()
	count := map[string]int{}
	for _, n := range want {
		count[n]++
	}
	for _, n := range got {
		count[n]--
	}
	var missing, extra []string
	for n, c := range count {
		for ; c > 0; c-- {
			missing = append(missing, fmt.Sprintf("%q", n))
		}
		for ; c < 0; c++ {
			extra = append(extra, fmt.Sprintf("%q", n))
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing)+len(extra) > 0 {
		t.Errorf("%s: %d listed, want %d; missing %v; unexpected %v", what, len(got), len(want), missing, extra)
	}
}

// checkScores compares the scores a client reports by name (names that
// a client leaves out are reported by checkSameNames); conv maps the fed score
// to what the client is expected to show.
func checkScores(t *testing.T, client string, got map[string]int32, st TestState, conv func(int32) int32) {
	t.Helper()
	for _, p := range st.Players {
		s, ok := got[p.Name]
		if !ok {
			continue // a missing name is reported by checkSameNames
		}
		if want := conv(p.Score); s != want {
			t.Errorf("%s: score of %q = %d, want %d", client, p.Name, s, want)
		}
	}
}

// checkDurations asserts that each player's connection time is the fed
// "time" plus at most a minute of test run.
func checkDurations(t *testing.T, client string, got map[string]float32, st TestState) {
	t.Helper()
	for _, p := range st.Players {
		d, ok := got[p.Name]
		if ok && (float64(d) < p.Time-1 || float64(d) > p.Time+60) {
			t.Errorf("%s: duration of %q = %.1f s, want %.0f s plus the test's run time", client, p.Name, d, p.Time)
		}
	}
}

// checkRules asserts that a client lists every fed rule with its value,
// and no other rule unless extraOK.
func checkRules(t *testing.T, client string, got, want map[string]string, extraOK bool) {
	t.Helper()
	if len(got) < len(want) || !extraOK && len(got) != len(want) {
		t.Errorf("%s: %d rules, want %d", client, len(got), len(want))
	}
	bad := 0
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			if bad++; bad <= 5 {
				t.Errorf("%s: rule %s = %q (present %v), want %q", client, k, g, ok, v)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d rules wrong in all", client, bad)
	}
}

// asciiOnly drops every byte outside ASCII, as qstat -nnx does.
func asciiOnly(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] < 0x80 {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

package interop

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// q3Only enables the Quake 3 responder with its default packet rate (a burst
// of 10 per source, then 1/s): the four client checks together send 6
// requests.
var q3Only = Options{Protocols: map[string]map[string]any{
	"quake3": {"gamename": "interop", "protocol": 84},
}}

// q3State is a Quake 3 / ET-like state: colour codes in the hostname and
// names, the characters the info string forbids (\ ; ") in names, negative
// scores, a bot (shown with ping 0) and a person whose ping is unknown (0,
// shown as 1 so that gamedig does not take them for a bot).
func q3State() TestState {
	s := TestState{
		Name:       "^1queryd ^7Q3 interop",
		Map:        "oasis",
		Folder:     "etmain",
		Version:    "ET 2.60b",
		MaxPlayers: 16,
		Rules:      map[string]string{"timelimit": "20", "g_gametype": "4", "sv_punkbuster": "0"},
	}
	for i, name := range []string{"^2Alice", "Bob", `Back\slash`, "Semi;colon", `Quote "Q"`, "Unknown Ping", "O'Brien"} {
		p := TestPlayer{ID: uint32(i + 1), Name: name, Score: int32(i*7 - 10), Ping: 20 + i*11}
		if name == "Unknown Ping" {
			p.Ping = 0
		}
		s.Players = append(s.Players, p)
	}
	s.Players = append(s.Players, TestPlayer{ID: 100, Name: "[BOT] Charlie", Score: -3, Bot: true})
	return s
}

// q3Wire is how queryd writes a name or value: \ -> /, ; -> :, " -> '.
func q3Wire(s string) string {
	return strings.NewReplacer(`\`, "/", ";", ":", `"`, "'").Replace(s)
}

var q3Colour = regexp.MustCompile(`\^[0-9A-Za-z]`)

// q3Plain is a name as the clients show it: the wire form without ^N colour codes.
func q3Plain(s string) string { return q3Colour.ReplaceAllString(q3Wire(s), "") }

// TestQuake3Clients feeds q3State and asks it through qstat (-q3s, -woets)
// and gamedig (quake3, wet); each is one subtest showing hostname, map,
// players and scores.
func TestQuake3Clients(t *testing.T) {
	d := StartDaemon(t, q3Only)
	st := q3State()
	d.Replace(t, st.Doc())

	t.Run("qstat_q3s", func(t *testing.T) { clientCheck(t, "qstat_q3s", "socket"); q3Qstat(t, "-q3s", d.UDPAddr, st) })
	t.Run("qstat_woets", func(t *testing.T) { clientCheck(t, "qstat_woets", "socket"); q3Qstat(t, "-woets", d.UDPAddr, st) })
	t.Run("gamedig_quake3", func(t *testing.T) { clientCheck(t, "gamedig_quake3", "socket"); q3Gamedig(t, "quake3", d.UDPAddr, st) })
	t.Run("gamedig_wet", func(t *testing.T) { clientCheck(t, "gamedig_wet", "socket"); q3Gamedig(t, "wet", d.UDPAddr, st) })
}

// q3QstatServer is the part of `quakestat -json` output the checks read.
type q3QstatServer struct {
	Status     string            `json:"status"`
	Name       string            `json:"name"`
	Map        string            `json:"map"`
	NumPlayers int               `json:"numplayers"`
	MaxPlayers int               `json:"maxplayers"`
	Rules      map[string]string `json:"rules"`
	Players    []struct {
		Name  string `json:"name"`
		Score int32  `json:"score"`
		Ping  int    `json:"ping"`
	} `json:"players"`
}

// q3Qstat runs qstat (getinfo then getstatus). -q3s strips ^N colour codes
// from names, -woets keeps them: names are compared without them.
func q3Qstat(t *testing.T, flag, addr string, st TestState) {
	NeedCommand(t, "quakestat")
	r := RunCmd(t, 30*time.Second, "", "quakestat", flag, addr, "-R", "-P", "-json", "-nnx")
	if r.Err != nil {
		t.Fatalf("qstat: %v", r.Err)
	}
	var servers []q3QstatServer
	if err := json.Unmarshal([]byte(r.Stdout), &servers); err != nil || len(servers) != 1 {
		t.Fatalf("qstat output is not one server (%v):\n%s", err, r.Stdout)
	}
	s := servers[0]
	if s.Status != "online" {
		t.Fatalf("qstat status %q, want online:\n%s", s.Status, r.Stdout)
	}
	checkEq(t, "name", q3Colour.ReplaceAllString(s.Name, ""), q3Plain(st.Name))
	checkEq(t, "map", s.Map, st.Map)
	checkEq(t, "numplayers", s.NumPlayers, len(st.Players))
	checkEq(t, "maxplayers", s.MaxPlayers, st.MaxPlayers)
	checkEq(t, "rule timelimit", s.Rules["timelimit"], "20")
	checkEq(t, "rule gamename", s.Rules["gamename"], "interop")
	got, want := map[string]int32{}, map[string]int32{}
	var names, wantNames []string
	for _, p := range s.Players {
		n := q3Colour.ReplaceAllString(p.Name, "")
		names, got[n] = append(names, n), p.Score
	}
	for _, p := range st.Players {
		wantNames, want[q3Plain(p.Name)] = append(wantNames, q3Plain(p.Name)), p.Score
	}
	checkSameNames(t, "qstat players", names, wantNames)
	for n, sc := range want {
		if g, ok := got[n]; ok && g != sc {
			t.Errorf("qstat score of %q = %d, want %d", n, g, sc)
		}
	}
	t.Logf("qstat %s: %q on %s, %d/%d players", flag, s.Name, s.Map, s.NumPlayers, s.MaxPlayers)
}

// q3GamedigResult is the part of gamedig's result the checks read.
type q3GamedigResult struct {
	Name       string `json:"name"`
	Map        string `json:"map"`
	NumPlayers int    `json:"numplayers"`
	MaxPlayers string `json:"maxplayers"`
	Players    []struct {
		Name string `json:"name"`
		Raw  struct {
			Frags int32 `json:"frags"`
			Ping  int   `json:"ping"`
		} `json:"raw"`
	} `json:"players"`
	Bots []struct {
		Name string `json:"name"`
		Raw  struct {
			Frags int32 `json:"frags"`
		} `json:"raw"`
	} `json:"bots"`
	Raw map[string]string `json:"raw"`
}

// q3Gamedig runs npm gamedig (getstatus\0). It strips colour codes and
// counts every ping-0 player as a bot: exactly the fed bots must be its bots.
func q3Gamedig(t *testing.T, typ, addr string, st TestState) {
	r := RunGamedig(t, typ, addr, nil)
	if r.Err != nil {
		t.Fatalf("gamedig: %v", r.Err)
	}
	var g q3GamedigResult
	if err := json.Unmarshal([]byte(r.Stdout), &g); err != nil {
		t.Fatalf("gamedig output: %v\n%s", err, r.Stdout)
	}
	checkEq(t, "name", g.Name, q3Plain(st.Name))
	checkEq(t, "map", g.Map, st.Map)
	checkEq(t, "numplayers", g.NumPlayers, len(st.Players))
	checkEq(t, "maxplayers", g.MaxPlayers, "16")
	checkEq(t, "raw gamename", g.Raw["gamename"], "interop")
	var people, bots, wantPeople, wantBots []string
	got := map[string]int32{}
	for _, p := range g.Players {
		people, got[p.Name] = append(people, p.Name), p.Raw.Frags
	}
	for _, b := range g.Bots {
		bots, got[b.Name] = append(bots, b.Name), b.Raw.Frags
	}
	for _, p := range st.Players {
		if p.Bot {
			wantBots = append(wantBots, q3Plain(p.Name))
		} else {
			wantPeople = append(wantPeople, q3Plain(p.Name))
		}
		if g, ok := got[q3Plain(p.Name)]; ok && g != p.Score {
			t.Errorf("gamedig frags of %q = %d, want %d", p.Name, g, p.Score)
		}
	}
	checkSameNames(t, "gamedig players", people, wantPeople)
	checkSameNames(t, "gamedig bots (ping 0)", bots, wantBots)
	t.Logf("gamedig %s: %q on %s, %d players (%d bots)", typ, g.Name, g.Map, g.NumPlayers, len(g.Bots))
}

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryd/queryd/agones/agonestest"
)

// seen is what one real client read from queryd: whether it got an
// answer, and the name, map and player names it shows.
type seen struct {
	ok         bool
	name, map_ string
	players    []string // sorted
}

func (s seen) String() string {
	if !s.ok {
		return "no answer"
	}
	return fmt.Sprintf("%q on %q, players %q", s.name, s.map_, s.players)
}

// realClient is one real client asking one protocol.
type realClient struct {
	name string
	ask  func(t *testing.T, addr string) seen
}

// realClients are qstat and gamedig for A2S, GameSpy4 and Quake 3.
var realClients = []realClient{
	{"qstat -a2s", func(t *testing.T, addr string) seen { return qstatSeen(t, "-a2s", addr) }},
	{"qstat -gs4", func(t *testing.T, addr string) seen { return qstatSeen(t, "-gs4", addr) }},
	{"qstat -q3s", func(t *testing.T, addr string) seen { return qstatSeen(t, "-q3s", addr) }},
	{"gamedig valve", func(t *testing.T, addr string) seen { return gamedigSeen(t, "valve", addr) }},
	{"gamedig gamespy3", func(t *testing.T, addr string) seen { return gamedigSeen(t, "gamespy3", addr) }},
	{"gamedig quake3", func(t *testing.T, addr string) seen { return gamedigSeen(t, "quake3", addr) }},
}

// quietCmd runs a client with a time limit, without logging each run (the
// tests run them in loops); only its stdout and whether it exited 0 count.
func quietCmd(dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	return string(out), err
}

// qstatSeen runs qstat once (it exits 0 even without an answer: only its
// status counts).
func qstatSeen(t *testing.T, flag, addr string) seen {
	out, err := quietCmd("", "quakestat", flag, addr, "-R", "-P", "-json", "-nnx")
	var servers []struct {
		Status  string `json:"status"`
		Name    string `json:"name"`
		Map     string `json:"map"`
		Players []struct {
			Name string `json:"name"`
		} `json:"players"`
	}
	if err != nil || json.Unmarshal([]byte(out), &servers) != nil || len(servers) != 1 || servers[0].Status != "online" {
		return seen{}
	}
	s := seen{ok: true, name: servers[0].Name, map_: servers[0].Map, players: []string{}}
	for _, p := range servers[0].Players {
		s.players = append(s.players, p.Name)
	}
	sort.Strings(s.players)
	return s
}

// gamedigSeen runs gamedig once. Its players and bots are read together
// (for Quake 3 it calls a player with ping 0 a bot, and Agones gives no
// pings); for gamespy3 the map is raw.map.
func gamedigSeen(t *testing.T, typ, addr string) seen {
	host, port, _ := net.SplitHostPort(addr)
	out, err := quietCmd(nodeDir, "node", "gamedig.mjs", typ, host, port, `{"socketTimeout":1000,"attemptTimeout":2000}`)
	var g struct {
		Name    string `json:"name"`
		Map     string `json:"map"`
		Players []struct {
			Name string `json:"name"`
		} `json:"players"`
		Bots []struct {
			Name string `json:"name"`
		} `json:"bots"`
		Raw map[string]any `json:"raw"`
	}
	if err != nil || json.Unmarshal([]byte(out), &g) != nil {
		return seen{}
	}
	s := seen{ok: true, name: g.Name, map_: g.Map, players: []string{}}
	if m, ok := g.Raw["map"].(string); ok && typ == "gamespy3" {
		s.map_ = m
	}
	for _, p := range append(g.Players, g.Bots...) {
		s.players = append(s.players, p.Name)
	}
	sort.Strings(s.players)
	return s
}

// clientLatencies are, per step, how long each real client took from the
// SDK call to the end of its first run that showed the change, and how
// long that run took (the client's start and its own waits: what queryd
// took is at most the total less nothing, at least the total less the
// run).
type clientLatencies struct {
	mu    sync.Mutex
	steps []string
	by    map[string]map[string][2]time.Duration // total, and the showing run's own time
}

func (l *clientLatencies) add(step, client string, total, run time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string]map[string][2]time.Duration{}
	}
	if l.by[step] == nil {
		l.by[step] = map[string][2]time.Duration{}
		l.steps = append(l.steps, step)
	}
	l.by[step][client] = [2]time.Duration{total, run}
}

func (l *clientLatencies) table() string {
	var b strings.Builder
	b.WriteString("| step |")
	for _, c := range realClients {
		b.WriteString(" " + c.name + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(realClients)) + "\n")
	for _, s := range l.steps {
		b.WriteString("| " + s + " |")
		for _, c := range realClients {
			if d, ok := l.by[s][c.name]; ok {
				fmt.Fprintf(&b, " %d (%d) ms |", d[0].Milliseconds(), d[1].Milliseconds())
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// untilClients runs every real client in a loop until each shows what
// want accepts, and records how long each took since begin; a client
// that never does within limit fails the test with what it last saw.
func untilClients(t *testing.T, addr string, begin time.Time, limit time.Duration, lat *clientLatencies, step string, want func(seen) bool) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fails []string
	for _, c := range realClients {
		wg.Go(func() {
			var last seen
			for time.Since(begin) < limit {
				start := time.Now()
				last = c.ask(t, addr)
				if want(last) {
					lat.add(step, c.name, time.Since(begin), time.Since(start))
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			mu.Lock()
			fails = append(fails, fmt.Sprintf("%s: %s did not show it within %s; it last saw %s", step, c.name, limit, last))
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, f := range fails {
		t.Error(f)
	}
}

// TestAgonesRealClients: queryd reads Agones' real SDK server ([agones]),
// which the test drives as a game would (REST SDK); qstat and gamedig ask
// A2S, GameSpy4 and Quake 3 in a loop after each change. Each shows the
// name the game set with SetAnnotation, the map it set with SetLabel and
// the players of the players List as they are added and removed; after
// Shutdown none gets an answer; a new GameServer file, Ready, is answered
// again. The time from the SDK call to a client's run that showed the
// change (the client's own start included) is logged as a table.
func TestAgonesRealClients(t *testing.T) {
	NeedCommand(t, "quakestat")
	sdk := agonestest.Start(t, agonestest.GameServerYAML("Ready", "My Agones Server", "lobby"))
	d := StartDaemon(t, Options{
		Protocols: map[string]map[string]any{"a2s": nil, "gamespy4": nil, "quake3": {"packet_rate": 0.0}},
		Tables: map[string]map[string]any{
			"agones": {"sdk": sdk.Addr()},
			"feed":   {"stale_after": "30s"},
		},
	})
	const limit = 5 * time.Second // a client's start (node: a few hundred ms) and a read every 500 ms
	var lat clientLatencies
	state := func(name, mapName string, players ...string) func(seen) bool {
		return func(s seen) bool {
			return s.ok && s.name == name && s.map_ == mapName && slices.Equal(s.players, players)
		}
	}
	untilClients(t, d.UDPAddr, time.Now(), 10*time.Second, &lat, "first read", state("My Agones Server", "lobby"))
	for _, step := range []struct {
		name, method, path, body string
		want                     func(seen) bool
	}{
		{"SetAnnotation name", "PUT", "/metadata/annotation", `{"key":"name","value":"Friday Night CTF"}`, state("Friday Night CTF", "lobby")},
		{"SetLabel map", "PUT", "/metadata/label", `{"key":"map","value":"de_dust2"}`, state("Friday Night CTF", "de_dust2")},
		{"List add alice", "POST", "/v1beta1/lists/players:addValue", `{"value":"alice"}`, state("Friday Night CTF", "de_dust2", "alice")},
		{"List add bob", "POST", "/v1beta1/lists/players:addValue", `{"value":"bob"}`, state("Friday Night CTF", "de_dust2", "alice", "bob")},
		{"List remove alice", "POST", "/v1beta1/lists/players:removeValue", `{"value":"alice"}`, state("Friday Night CTF", "de_dust2", "bob")},
		{"Shutdown", "POST", "/shutdown", `{}`, func(s seen) bool { return !s.ok }},
	} {
		begin := time.Now()
		sdk.Call(step.method, step.path, step.body)
		untilClients(t, d.UDPAddr, begin, limit, &lat, step.name, step.want)
	}
	begin := time.Now()
	sdk.Write(agonestest.GameServerYAML("Ready", "My Agones Server", "second-round"))
	untilClients(t, d.UDPAddr, begin, limit, &lat, "Ready again (new file)", state("My Agones Server", "second-round"))
	t.Logf("from the SDK call to the end of a real client's first run that showed the change (in brackets: that run's own time, the client's start included):\n%s", lat.table())
}

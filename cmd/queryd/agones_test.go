package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/agones/agonestest"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/module"
)

// gameServer is the tests' GameServer file for the SDK server's local
// mode: its manifest names it "My Agones Server" on mapName.
func gameServer(st, mapName string) string {
	return agonestest.GameServerYAML(st, "My Agones Server", mapName)
}

// TestAgonesDaemon drives Agones' real SDK server as a game would,
// through its REST SDK, with queryd reading it ([agones]) and every
// protocol of the registration list (A2S, GameSpy4, SAGL, Quake 3,
// Bedrock, SQP) asked with its own client: a name set with SetAnnotation,
// a map with SetLabel, players added to and removed from the players
// List each show in every protocol within a second (the latency of each
// is logged as a table); Shutdown silences every protocol within a second
// (healthz, /status.json and queryd_server_state say agones_stopped); a
// new GameServer file, Ready, answers again; the SDK server killed, queryd
// keeps the last state until stale_after and is then silent (agones);
// restarted, it answers again without a restart of queryd.
func TestAgonesDaemon(t *testing.T) {
	sdk := agonestest.Start(t, gameServer("Ready", "lobby"))
	const stale = 3 * time.Second // over interval (500ms) plus timeout (2s)
	d := startAgones(t, sdk.Addr(), stale.String(), "")
	addr := d.UDP().String()
	srv := d.Server("main")
	var lat latencies
	untilAll(t, addr, time.Now(), 10*time.Second, &lat, "first read", nil, named("My Agones Server", "lobby"))
	wantState(t, d, "main", false, daemon.StateAnswering, "", "Ready")

	step := func(name, method, path, body string, skip map[string]bool, cond func(string, module.Summary) bool) {
		t.Helper()
		begin := time.Now()
		sdk.Call(method, path, body)
		untilAll(t, addr, begin, agonesWithin, &lat, name, skip, cond)
	}
	step("SetAnnotation name", "PUT", "/metadata/annotation", `{"key":"name","value":"Game's Own Name"}`, nil, named("Game's Own Name", "lobby"))
	step("SetLabel map", "PUT", "/metadata/label", `{"key":"map","value":"de_dust2"}`, noMap, named("Game's Own Name", "de_dust2"))
	step("List add alice", "POST", "/v1beta1/lists/players:addValue", `{"value":"alice"}`, nil, counted(1, 16))
	step("List add bob", "POST", "/v1beta1/lists/players:addValue", `{"value":"bob"}`, nil, counted(2, 16))
	if got := a2sNames(t, addr); !sameStrings(got, []string{"alice", "bob"}) {
		t.Errorf("A2S players %q, want alice and bob", got)
	}
	step("List remove alice", "POST", "/v1beta1/lists/players:removeValue", `{"value":"alice"}`, nil, counted(1, 16))
	if got := a2sNames(t, addr); !sameStrings(got, []string{"bob"}) {
		t.Errorf("A2S players %q, want bob", got)
	}
	step("Allocate", "POST", "/allocate", `{}`, nil, named("Game's Own Name", "de_dust2"))
	wantState(t, d, "main", false, daemon.StateAnswering, "", "Allocated")

	// Shutdown: silent at once, on every path.
	begin := time.Now()
	sdk.Call("POST", "/shutdown", `{}`)
	took := untilSilence(t, srv, begin, 5*time.Second, "Shutdown", func(s daemon.Silence) bool {
		return s.Silent && s.Reason == daemon.ReasonAgonesStopped
	})
	t.Logf("Shutdown: silent %s after the SDK call (the one silence value the sockets and the XDP program read)", took.Round(time.Millisecond))
	if took > agonesWithin {
		t.Errorf("Shutdown: silent after %s, not within %s", took, agonesWithin)
	}
	wantNoAnswer(t, addr, "Shutdown")
	wantState(t, d, "main", false, daemon.StateSilent, daemon.ReasonAgonesStopped, "Shutdown")

	// Ready again: a new GameServer (a new file, as after the game's restart).
	begin = time.Now()
	sdk.Write(gameServer("Ready", "second-round"))
	untilAll(t, addr, begin, agonesWithin, &lat, "Ready again (new file)", nil, named("My Agones Server", "second-round"))
	wantState(t, d, "main", false, daemon.StateAnswering, "", "Ready")

	// Killed: the last state stands until stale_after, then silence.
	sdk.Kill()
	killed := time.Now()
	time.Sleep(stale / 2)
	if s, err := askOnce(querierModule(t, "a2s"), addr, time.Second); err != nil || s.Map != "second-round" {
		t.Errorf("%s after the SDK server was killed (stale_after %s): A2S %+v %v, want the last state", time.Since(killed), stale, s, err)
	}
	took = untilSilence(t, srv, killed, stale+3*time.Second, "SDK server killed", func(s daemon.Silence) bool {
		return s.Silent && s.Reason == daemon.ReasonAgones
	})
	t.Logf("SDK server killed: silent %s later (stale_after %s, reads every %s)", took.Round(time.Millisecond), stale, 500*time.Millisecond)
	if took < stale-700*time.Millisecond {
		t.Errorf("silent %s after the kill: before stale_after (%s) less one read's interval", took, stale)
	}
	wantNoAnswer(t, addr, "SDK server killed")
	wantState(t, d, "main", false, daemon.StateSilent, daemon.ReasonAgones, "Ready")

	// Restarted: read again, no restart of queryd.
	sdk.Write(gameServer("Ready", "lobby"))
	begin = time.Now()
	sdk.Run()
	untilAll(t, addr, begin, 5*time.Second, &lat, "SDK server restarted", nil, named("My Agones Server", "lobby"))
	wantState(t, d, "main", false, daemon.StateAnswering, "", "Ready")
	if n := d.Metric(t, "queryd_agones_reconnects_total", ""); n == 0 {
		t.Errorf("queryd_agones_reconnects_total: 0 after the SDK server's restart")
	}
	t.Logf("from the SDK call to a changed answer, each protocol (its own client, asked in a loop):\n%s", lat.table())
}

// TestAgonesDaemonCounter: with no players List read (players_list = ""),
// the players Counter's count and capacity are the players and max players
// of every protocol, within a second of the SDK call.
func TestAgonesDaemonCounter(t *testing.T) {
	sdk := agonestest.Start(t, gameServer("Ready", "lobby"))
	d := startAgones(t, sdk.Addr(), "30s", `players_list = ""`)
	addr := d.UDP().String()
	var lat latencies
	untilAll(t, addr, time.Now(), 10*time.Second, &lat, "first read", nil, counted(0, 16))
	for _, c := range []struct {
		body     string
		n, capac int
	}{
		{`{"countDiff":"3"}`, 3, 16},
		{`{"countDiff":"-1"}`, 2, 16},
		{`{"capacity":"20"}`, 2, 20},
	} {
		begin := time.Now()
		sdk.Call("PATCH", "/v1beta1/counters/players", c.body)
		untilAll(t, addr, begin, agonesWithin, &lat, "Counter "+strings.ReplaceAll(c.body, `"`, ""), nil, counted(c.n, c.capac))
	}
	t.Logf("from the Counter change to a changed answer, each protocol:\n%s", lat.table())
}

// TestAgonesDaemonStarting: before the SDK server is read queryd answers
// nothing (agones_starting), not even [server]; while the GameServer is
// Scheduled it still answers nothing; once Ready it answers the
// GameServer's state, within a second of the file's change.
func TestAgonesDaemonStarting(t *testing.T) {
	sdk := agonestest.New(t, gameServer("Scheduled", "lobby")) // not running yet
	d := startAgones(t, sdk.Addr(), "30s", "")
	addr := d.UDP().String()
	time.Sleep(300 * time.Millisecond)
	wantNoAnswer(t, addr, "the SDK server not read yet")
	if s := d.Silence(); !s.Silent || s.Reason != daemon.ReasonAgonesStarting {
		t.Errorf("not read yet: %+v, want silent agones_starting", s)
	}
	wantState(t, d, "main", false, daemon.StateSilent, daemon.ReasonAgonesStarting, "")

	sdk.Run()
	wantState(t, d, "main", false, daemon.StateSilent, daemon.ReasonAgonesStarting, "Scheduled")
	wantNoAnswer(t, addr, "Scheduled")

	var lat latencies
	begin := time.Now()
	sdk.Write(gameServer("Ready", "lobby"))
	untilAll(t, addr, begin, agonesWithin, &lat, "Scheduled to Ready", nil, named("My Agones Server", "lobby"))
	wantState(t, d, "main", false, daemon.StateAnswering, "", "Ready")
	t.Logf("Scheduled to Ready:\n%s", lat.table())
}

// querierModule is the registration list's module named name.
func querierModule(t *testing.T, name string) protocolModule {
	t.Helper()
	for _, m := range modules {
		if m.Name() == name {
			return m
		}
	}
	t.Fatalf("no module %s", name)
	return nil
}

// TestAgonesHost: host mode, two servers, each reading its own SDK server
// (two sdk-server processes): each answers its own GameServer, a change
// through one SDK server shows on its server only, and a Shutdown silences
// that server alone (/healthz/NAME, /status.json?server=NAME and
// queryd_server_state{server} say agones_stopped for it, answering for
// the other); the Agones metrics carry each server's label.
func TestAgonesHost(t *testing.T) {
	sdkA := agonestest.Start(t, agonestest.GameServerYAML("Ready", "Alpha Agones", "map_a"))
	sdkB := agonestest.Start(t, agonestest.GameServerYAML("Ready", "Bravo Agones", "map_b"))
	path := writeHost(t)
	dir := filepath.Dir(path)
	writeServer(t, dir, "alpha", fmt.Sprintf("[agones]\nsdk = %q\n", sdkA.Addr())+agonesBudgets)
	writeServer(t, dir, "bravo", fmt.Sprintf("[agones]\nsdk = %q\n", sdkB.Addr())+agonesBudgets)
	d := startHost(t, path)
	a, b := serverAddr(t, d, "alpha"), serverAddr(t, d, "bravo")
	var lat latencies
	untilAll(t, a, time.Now(), 10*time.Second, &lat, "alpha: first read", nil, named("Alpha Agones", "map_a"))
	untilAll(t, b, time.Now(), 10*time.Second, &lat, "bravo: first read", nil, named("Bravo Agones", "map_b"))

	begin := time.Now()
	sdkA.Call("PUT", "/metadata/annotation", `{"key":"name","value":"Alpha Renamed"}`)
	untilAll(t, a, begin, agonesWithin, &lat, "alpha: SetAnnotation name", nil, named("Alpha Renamed", "map_a"))
	untilAll(t, b, time.Now(), time.Second, &lat, "bravo: unchanged", nil, named("Bravo Agones", "map_b"))

	begin = time.Now()
	sdkB.Call("POST", "/shutdown", `{}`)
	took := untilSilence(t, d.Server("bravo"), begin, 5*time.Second, "bravo Shutdown", func(s daemon.Silence) bool {
		return s.Silent && s.Reason == daemon.ReasonAgonesStopped
	})
	t.Logf("bravo Shutdown: silent %s after the SDK call", took.Round(time.Millisecond))
	if took > agonesWithin {
		t.Errorf("bravo Shutdown: silent after %s, not within %s", took, agonesWithin)
	}
	wantNoAnswer(t, b, "bravo Shutdown")
	untilAll(t, a, time.Now(), time.Second, &lat, "alpha: still answering", nil, named("Alpha Renamed", "map_a"))
	wantState(t, d, "alpha", true, daemon.StateAnswering, "", "Ready")
	wantState(t, d, "bravo", true, daemon.StateSilent, daemon.ReasonAgonesStopped, "Shutdown")
	if code, _ := getJSON(t, d, "/healthz"); code != 503 {
		t.Errorf("/healthz %d with bravo silent, want 503", code)
	}
	for _, srv := range []string{"alpha", "bravo"} {
		if n := agonesReads(t, d, srv, "watch", "applied"); n < 1 {
			t.Errorf("queryd_agones_reads_total{server=%q,source=watch,outcome=applied} = %v", srv, n)
		}
	}
	t.Logf("host mode:\n%s", lat.table())
}

package agones

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/agones/agonestest"
	"github.com/queryd/queryd/state"
)

// gameServerYAML is a GameServer file for the SDK server's local mode, in
// state st.
func gameServerYAML(st string) string {
	return agonestest.GameServerYAML(st, "My Agones Server", "lobby")
}

// within is how soon a change the game makes through the SDK must show in
// the state (the contract).
const within = time.Second

// TestSDKServer drives Agones' real SDK server as a game would, through
// its REST SDK, and checks that each change shows in the state and the
// status within a second; then kills the SDK server and starts it again.
func TestSDKServer(t *testing.T) {
	sdk := agonestest.Start(t, gameServerYAML("Ready"))
	start := time.Now()
	h := watch(t, sdk.Addr(), nil)
	h.until(5*time.Second, "first GameServer", func(s Status, snap *state.Snapshot) bool {
		return s.Class == ClassAnswering && snap.Name == "My Agones Server"
	})
	t.Logf("first GameServer read %s after the watcher started", time.Since(start).Round(time.Millisecond))
	snap := h.store.Snapshot()
	if snap.Map != "lobby" || snap.Game != "Example Game" || snap.MaxPlayers != 16 || len(snap.Players) != 0 ||
		ruleValue(snap, "region") != "eu" || snap.GamePort != 7654 {
		t.Fatalf("the manifest's fields: got name %q map %q game %q max %d players %v rules %v game_port %d",
			snap.Name, snap.Map, snap.Game, snap.MaxPlayers, names(snap), snap.Rules, snap.GamePort)
	}

	var lat []string
	step := func(what, method, path, body string, cond func(Status, *state.Snapshot) bool) {
		t.Helper()
		begin := time.Now()
		sdk.Call(method, path, body)
		h.until(within, what, func(s Status, snap *state.Snapshot) bool { return cond(s, snap) })
		lat = append(lat, fmt.Sprintf("%s %s", what, time.Since(begin).Round(time.Millisecond)))
	}
	step("SetAnnotation name", "PUT", "/metadata/annotation", `{"key":"name","value":"Game's Own Name"}`,
		func(_ Status, s *state.Snapshot) bool { return s.Name == "Game's Own Name" })
	step("SetLabel map", "PUT", "/metadata/label", `{"key":"map","value":"de_dust2"}`,
		func(_ Status, s *state.Snapshot) bool { return s.Map == "de_dust2" })
	step("SetAnnotation rule", "PUT", "/metadata/annotation", `{"key":"rule.mp_timelimit","value":"30"}`,
		func(_ Status, s *state.Snapshot) bool { return ruleValue(s, "mp_timelimit") == "30" })
	step("List add alice", "POST", "/v1beta1/lists/players:addValue", `{"value":"alice"}`,
		func(_ Status, s *state.Snapshot) bool { return slices.Equal(names(s), []string{"alice"}) })
	step("List add bob", "POST", "/v1beta1/lists/players:addValue", `{"value":"bob"}`,
		func(_ Status, s *state.Snapshot) bool { return slices.Equal(names(s), []string{"alice", "bob"}) })
	bob := h.store.Snapshot().Players[1]
	step("List remove alice", "POST", "/v1beta1/lists/players:removeValue", `{"value":"alice"}`,
		func(_ Status, s *state.Snapshot) bool { return slices.Equal(names(s), []string{"bob"}) })
	if p := h.store.Snapshot().Players[0]; p.ID != bob.ID || !p.Since.Equal(bob.Since) {
		t.Errorf("bob changed id or connection time when alice left: %+v, was %+v", p, bob)
	}
	step("Allocate", "POST", "/allocate", `{}`,
		func(s Status, _ *state.Snapshot) bool { return s.State == "Allocated" && s.Class == ClassAnswering })
	step("Shutdown", "POST", "/shutdown", `{}`,
		func(s Status, _ *state.Snapshot) bool { return s.State == "Shutdown" && s.Class == ClassSilent })
	begin := time.Now()
	sdk.Write(strings.Replace(gameServerYAML("Ready"), "lobby", "second-round", 1))
	h.until(within, "Ready again (a new file)", func(s Status, snap *state.Snapshot) bool {
		return s.Class == ClassAnswering && snap.Map == "second-round" // the file replaces the SDK's labels too
	})
	lat = append(lat, fmt.Sprintf("Ready again (new file) %s", time.Since(begin).Round(time.Millisecond)))
	t.Logf("from the SDK call to the new state: %s", strings.Join(lat, ", "))

	// Killed: nothing is read any more (the daemon goes silent past
	// stale_after), the last state stands.
	sdk.Kill()
	killed := time.Now()
	h.until(5*time.Second, "the watch stream lost", func(s Status, _ *state.Snapshot) bool {
		return !s.Watching && s.LastError != ""
	})
	time.Sleep(3 * h.w.interval)
	s := h.w.Status()
	if age := time.Since(s.LastRead); age < 2*h.w.interval || s.LastRead.After(killed) {
		t.Errorf("LastRead %s ago (killed %s ago): still reading a dead SDK server?", age, time.Since(killed))
	}
	if s.Class != ClassAnswering || h.store.Snapshot().Map != "second-round" {
		t.Errorf("the last GameServer read is not kept: %+v", s)
	}
	if h.reads(SourceGet, ReasonFailed) == 0 || h.reads(SourceWatch, ReasonFailed) == 0 {
		t.Errorf("failed reads not counted: get %v watch %v", h.reads(SourceGet, ReasonFailed), h.reads(SourceWatch, ReasonFailed))
	}

	// Restarted: read again without a new watcher.
	sdk.Write(gameServerYAML("Ready"))
	sdk.Run()
	restarted := time.Now()
	h.until(5*time.Second, "reading again after a restart", func(s Status, snap *state.Snapshot) bool {
		return s.Watching && s.LastRead.After(restarted) && s.LastError == "" && snap.Map == "lobby"
	})
	t.Logf("reading again %s after the SDK server answered (back-off at most %s)", time.Since(restarted).Round(time.Millisecond), maxBackoff)
	if n := h.metric("queryd_agones_reconnects_total"); n == 0 {
		t.Errorf("queryd_agones_reconnects_total: 0 after a restart")
	}
}

// TestSDKServerCounter: without a players List, the players Counter's count
// is the number of players and its capacity max_players.
func TestSDKServerCounter(t *testing.T) {
	sdk := agonestest.Start(t, gameServerYAML("Ready"))
	cfg := NewConfig()
	cfg.PlayersList = ""
	h := watch(t, sdk.Addr(), cfg)
	h.until(5*time.Second, "first GameServer", func(s Status, snap *state.Snapshot) bool { return s.Class == ClassAnswering })
	var lat []string
	for _, c := range []struct {
		body      string
		n, capVal int
	}{
		{`{"countDiff":"3"}`, 3, 16},
		{`{"countDiff":"-1"}`, 2, 16},
		{`{"capacity":"20"}`, 2, 20},
	} {
		begin := time.Now()
		sdk.Call("PATCH", "/v1beta1/counters/players", c.body)
		h.until(within, "Counter "+c.body, func(_ Status, s *state.Snapshot) bool {
			return len(s.Players) == c.n && s.MaxPlayers == c.capVal
		})
		lat = append(lat, fmt.Sprintf("%s %s", c.body, time.Since(begin).Round(time.Millisecond)))
	}
	for _, p := range h.store.Snapshot().Players {
		if p.Name != "" {
			t.Errorf("a Counter's player has a name: %+v", p)
		}
	}
	t.Logf("from the Counter change to the new state: %s", strings.Join(lat, ", "))
}

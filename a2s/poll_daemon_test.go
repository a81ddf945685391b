package a2s_test

import (
	"context"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/module"
)

// A poll of a queryd that speaks only A2S (as a Source server would)
// gives the state it serves, split A2S_RULES included.
func TestPollDaemon(t *testing.T) {
	back := daemontest.Start(t, []daemon.Module{a2s.Module{}}, "")
	players, rules := map[string]any{}, map[string]any{}
	for i := range 30 {
		players[string(rune('1'+i%9))+string(rune('0'+i/9))] = map[string]any{"name": "Player Zoë " + string(rune('A'+i)), "score": i - 3}
	}
	for i := range 120 {
		rules["rule_"+string(rune('a'+i%26))+string(rune('a'+i/26))] = "a value long enough to need several packets of rules, " + string(rune('A'+i%26))
	}
	if _, err := back.Feed(t).Replace(map[string]any{"name": "back", "map": "cp_badlands", "max_players": 32, "players": players, "rules": rules}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := a2s.Module{}.Poll(ctx, back.UDP(), module.PollOptions{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := polltest.Valid(t, got.Doc)
	r := polltest.Rules(s)
	if s.Name != "back" || s.Map != "cp_badlands" || s.MaxPlayers != 32 || len(s.Players) != 30 || len(r) != 120 || s.A2S == nil || s.A2S.AppID != a2s.DefaultAppID {
		t.Fatalf("%+v (%d rules)", s, len(r))
	}
	if got.Partial != nil {
		t.Errorf("partial: %v", got.Partial)
	}
}

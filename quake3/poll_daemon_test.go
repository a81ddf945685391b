package quake3_test

import (
	"context"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/quake3"
)

// A poll of a queryd that speaks only Quake 3 (as ioquake3 would) gives
// the state it serves.
func TestPollDaemon(t *testing.T) {
	back := daemontest.Start(t, mods, "[quake3]\ngamename = \"baseoa\"\n")
	if _, err := back.Feed(t).Replace(map[string]any{"name": "q3 back", "map": "q3dm17", "max_players": 12,
		"players": map[string]any{"1": map[string]any{"name": "Ann", "score": 3, "ping": 50}, "2": map[string]any{"name": "Bot", "bot": true}},
		"rules":   map[string]any{"g_gametype": "0"}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := quake3.Module{}.Poll(ctx, back.UDP(), module.PollOptions{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := polltest.Valid(t, got.Doc)
	if s.Name != "q3 back" || s.Map != "q3dm17" || s.MaxPlayers != 12 || s.Folder != "baseoa" || len(s.Players) != 2 ||
		s.Players[0].Name != "Ann" || s.Players[0].Ping != 50 || !s.Players[1].Bot || polltest.Rules(s)["g_gametype"] != "0" {
		t.Fatalf("%+v\nrules %v", s, polltest.Rules(s))
	}
}

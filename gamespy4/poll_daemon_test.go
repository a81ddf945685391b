package gamespy4_test

import (
	"context"
	"testing"
	"time"

	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/module"
)

// A poll of a queryd that speaks only GameSpy4 (as a stock Minecraft
// server would) gives the state it serves.
func TestPollDaemon(t *testing.T) {
	back := startGS4(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := gamespy4.Module{}.Poll(ctx, back.UDP(), module.PollOptions{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := polltest.Valid(t, got.Doc)
	rules := polltest.Rules(s)
	if s.Name != "config name" || s.Map != "config_map" || s.GameVersion != "1.20.4" || s.MaxPlayers != 10 || s.GamePort != 25565 ||
		s.Game != "MINECRAFT" || len(s.Players) != 2 || s.Players[0].Name != "Steve" || s.Players[1].Name != "Alex" ||
		len(rules) != 1 || rules["difficulty"] != "hard" || s.GameSpy4 == nil || *s.GameSpy4.Plugins != "queryd: Example 1.0" ||
		*s.GameSpy4.HostIP != "203.0.113.7" || *s.GameSpy4.GameType != "SMP" {
		t.Fatalf("%+v\nrules %v", s, rules)
	}
	if got.Partial != nil || len(got.Unanswered) != 0 {
		t.Errorf("partial: %v %v", got.Unanswered, got.Partial)
	}
	// Relay mode: queryd's address is the game's, not the server's hostip.
	got, err = gamespy4.Module{}.Poll(ctx, back.UDP(), module.PollOptions{Timeout: 2 * time.Second, OwnAddress: true})
	if err != nil {
		t.Fatal(err)
	}
	if s := polltest.Valid(t, got.Doc); s.GameSpy4 == nil || s.GameSpy4.HostIP != nil || s.GameSpy4.Plugins == nil {
		t.Errorf("OwnAddress: gamespy4 object %+v, want no hostip", s.GameSpy4)
	}
}

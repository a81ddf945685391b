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
		rules["difficulty"] != "hard" || rules["plugins"] != "queryd: Example 1.0" || rules["hostip"] != "203.0.113.7" || rules["gametype"] != "SMP" {
		t.Fatalf("%+v\nrules %v", s, rules)
	}
	if got.Partial != nil || len(got.Unanswered) != 0 {
		t.Errorf("partial: %v %v", got.Unanswered, got.Partial)
	}
}

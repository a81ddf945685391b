package sqp_test

import (
	"context"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/sqp"
)

// A poll of a queryd that speaks only SQP (as a Unity/Multiplay server
// would) gives the state it serves.
func TestPollDaemon(t *testing.T) {
	back := startSQP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := sqp.Module{}.Poll(ctx, back.UDP(), module.PollOptions{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := polltest.Valid(t, got.Doc)
	r := polltest.Rules(s)
	if s.Name != "config name" || s.Map != "config_map" || s.GameVersion != "1.20.4" || s.Gamemode != "Survival" || s.GamePort != 7777 ||
		len(s.Players) != 2 || s.Players[0].Name != "Steve" || s.Players[0].Score != -4 || s.Players[1].Ping != 35 ||
		r["difficulty"] != "hard" || r["pvp"] != "true" || r["spawn"] != "16" {
		t.Fatalf("%+v\nrules %v", s, r)
	}
}

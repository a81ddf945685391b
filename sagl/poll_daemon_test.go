package sagl_test

import (
	"context"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/sagl"
)

// A poll of a queryd that speaks only SAGL gives the state it serves.
func TestPollDaemon(t *testing.T) {
	back, _ := startSAGL(t, "")
	_, err := back.Feed(t).Replace(map[string]any{
		"name": "Example RP", "version": "0.2.0", "protocol": 102, "max_players": 64, "players": saglPlayers(40),
		"branding": map[string]any{"primary": "#ff8800", "show_name": true}, "gamemode": "Roleplay",
		"tags": []string{"roleplay"}, "links": map[string]any{"website": "https://example.com"},
		"values": map[string]any{"map": "Los Santos", "copsOnDuty": 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := sagl.Module{}.Poll(ctx, back.UDP(), module.PollOptions{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := polltest.Valid(t, got.Doc)
	if s.Name != "Example RP" || s.GameVersion != "0.2.0" || s.Protocol != 102 || s.MaxPlayers != 64 || len(s.Players) != 40 ||
		s.Players[39].Name != "Player 0039" || s.Gamemode != "Roleplay" || s.Branding.Primary != "#ff8800" || len(s.Values) != 2 ||
		len(s.Links) != 1 || len(s.Tags) != 1 {
		t.Fatalf("%+v", s)
	}
}

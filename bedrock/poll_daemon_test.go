package bedrock_test

import (
	"context"
	"testing"
	"time"

	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/module"
)

// A poll of a queryd that speaks only Bedrock (as a stock Bedrock
// Dedicated Server would) gives the state it serves: the counts, motd,
// sub-motd, version and game mode.
func TestPollDaemon(t *testing.T) {
	back := daemontest.Start(t, mods, bedrockExtra)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := bedrock.Module{}.Poll(ctx, back.UDP(), module.PollOptions{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := polltest.Valid(t, got.Doc)
	r := polltest.Rules(s)
	if s.Name != "config name" || s.Map != "config_map" || s.GameVersion != "1.21.50" || s.MaxPlayers != 10 || s.Gamemode != "Creative" ||
		len(s.Players) != 2 || s.GamePort != 19132 || len(r) != 0 || s.Bedrock == nil || s.Bedrock.IPv6Port != 19133 || s.Bedrock.Edition != "MCPE" ||
		s.Bedrock.ServerID < bedrock.MinGUID {
		t.Fatalf("%+v\nrules %v", s, r)
	}
	// Relay mode: queryd's ports are the game's, not the server's IPv6 port.
	got, err = bedrock.Module{}.Poll(ctx, back.UDP(), module.PollOptions{Timeout: 2 * time.Second, OwnAddress: true})
	if err != nil {
		t.Fatal(err)
	}
	if s := polltest.Valid(t, got.Doc); s.Bedrock == nil || s.Bedrock.IPv6Port != -1 || s.Bedrock.Edition != "MCPE" {
		t.Errorf("OwnAddress: bedrock object %+v, want no ipv6_port", s.Bedrock)
	}
}

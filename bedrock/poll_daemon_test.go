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
		len(s.Players) != 2 || s.GamePort != 19132 || r[bedrock.RuleIPv6Port] != "19133" || r[bedrock.RuleEdition] != "MCPE" || len(r[bedrock.RuleServerID]) != 19 {
		t.Fatalf("%+v\nrules %v", s, r)
	}
}

package gamespy4

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/internal/udptest"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// The Minecraft wiki's full stat (a vanilla server's reply) is read
// exactly: every vanilla key in its common field or, with no place, the
// "gamespy4" object, which the front shows instead of [gamespy4]'s; no
// rules, since the server sent no extra keys.
func TestFromFullWiki(t *testing.T) {
	f, err := ParseFull(append([]byte{0, 0, 0, 0, 1}, unhex(t, wikiFull)...), [4]byte{0, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	s := polltest.Valid(t, FromFull(f))
	if s.Name != "A Minecraft Server" || s.Map != "world" || s.GameVersion != "Beta 1.9 Prerelease 4" || s.Game != "MINECRAFT" ||
		s.MaxPlayers != 20 || s.GamePort != 25565 || len(s.Players) != 2 || s.Players[0].Name != "barneygale" || s.Players[1].Name != "Vivalahelvig" {
		t.Errorf("%+v", s)
	}
	if got := polltest.Rules(s); len(got) != 0 {
		t.Errorf("rules %v, want none: the server sent no extra keys", got)
	}
	g := s.GameSpy4
	if g == nil || g.GameType == nil || *g.GameType != "SMP" || g.GameID == nil || *g.GameID != "MINECRAFT" ||
		g.Plugins == nil || *g.Plugins != "" || g.HostIP == nil || *g.HostIP != "127.0.0.1" {
		t.Errorf("gamespy4 object %+v", g)
	}
	cfg := Config{GameType: "other", GameID: "other", Plugins: "other", HostIP: "10.0.0.1"}.For(s)
	if cfg.GameType != "SMP" || cfg.GameID != "MINECRAFT" || cfg.Plugins != "" || cfg.HostIP != "127.0.0.1" {
		t.Errorf("the front's vanilla keys %+v, want the server's", cfg)
	}
}

// Odd full stat values are fitted to the state: nothing that fits is lost.
func TestFromFullOddValues(t *testing.T) {
	for name, c := range map[string]struct {
		keys    [][2]string
		players []string
		check   func(t *testing.T, s *state.Snapshot)
	}{
		"maxplayers not a count stays a rule": {[][2]string{{"maxplayers", "lots"}}, nil, func(t *testing.T, s *state.Snapshot) {
			if s.MaxPlayers != 0 || polltest.Rules(s)["maxplayers"] != "lots" {
				t.Errorf("%+v", s)
			}
		}},
		"hostport 0 or over 65535 stays a rule": {[][2]string{{"hostport", "0"}, {"x", "1"}}, nil, func(t *testing.T, s *state.Snapshot) {
			if s.GamePort != 0 || polltest.Rules(s)["hostport"] != "0" {
				t.Errorf("%+v", s)
			}
		}},
		"numplayers over the list is kept": {[][2]string{{"numplayers", "80"}}, []string{"a"}, func(t *testing.T, s *state.Snapshot) {
			if polltest.Rules(s)["numplayers"] != "80" || len(s.Players) != 1 {
				t.Errorf("%+v", s)
			}
		}},
		"a repeated key: the first": {[][2]string{{"hostname", "one"}, {"hostname", "two"}}, nil, func(t *testing.T, s *state.Snapshot) {
			if s.Name != "one" || len(s.Rules) != 0 {
				t.Errorf("%+v", s)
			}
		}},
		"long and invalid text": {[][2]string{{"hostname", strings.Repeat("é", 300) + "\xff"}}, []string{strings.Repeat("n", 99)}, func(t *testing.T, s *state.Snapshot) {
			if len([]rune(s.Name)) != state.MaxNameLen || len(s.Players[0].Name) != state.MaxPlayerName {
				t.Errorf("%q %q", s.Name, s.Players[0].Name)
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			c.check(t, polltest.Valid(t, FromFull(&Full{Keys: c.keys, Players: c.players})))
		})
	}
}

// A poll reads only replies with its own session id: a full stat with
// another (forged, or for another client) that comes first is dropped.
func TestPollSessionChecked(t *testing.T) {
	full := func(session []byte, name string) []byte {
		b := append([]byte{TypeStat}, session...)
		b = append(b, splitnumHeader...)
		b = append(b, "hostname\x00"+name+"\x00\x00"...)
		b = append(b, playerHeader...)
		return append(b, 0)
	}
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		if len(req) < 7 {
			return nil
		}
		session := req[3:7]
		if req[2] == TypeHandshake {
			return [][]byte{append(append([]byte{TypeHandshake}, session...), "9513307\x00"...)}
		}
		return [][]byte{full([]byte{1, 2, 3, 4}, "FORGED"), full(session, "real")}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := Module{}.Poll(ctx, netip.MustParseAddrPort(addr), module.PollOptions{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if s := polltest.Valid(t, got.Doc); s.Name != "real" {
		t.Fatalf("name %q: a reply with another session id was read", s.Name)
	}
}

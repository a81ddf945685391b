package interop

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// TestPlayer is one player of a test state: what is fed, and so what every
// client should report.
type TestPlayer struct {
	ID    uint32
	Name  string
	Score int32
	Ping  int
	Time  float64 // seconds connected, fed as "time"
	Bot   bool
}

// TestState is a state document to feed, kept in a form tests can compare
// client output with.
type TestState struct {
	Name, Map, Game, Folder, Version string
	MaxPlayers                       int
	Players                          []TestPlayer
	Rules                            map[string]string
}

// Doc is the state as a feed document (for feed.Client Replace).
func (s TestState) Doc() map[string]any {
	players := map[string]any{}
	for _, p := range s.Players {
		players[strconv.FormatUint(uint64(p.ID), 10)] = map[string]any{
			"name": p.Name, "score": p.Score, "ping": p.Ping, "time": p.Time, "bot": p.Bot,
		}
	}
	rules := map[string]any{}
	for k, v := range s.Rules {
		rules[k] = v
	}
	return map[string]any{
		"name": s.Name, "map": s.Map, "game": s.Game, "folder": s.Folder,
		"version": s.Version, "max_players": s.MaxPlayers,
		"players": players, "rules": rules,
	}
}

// PlayerNames returns the players' names, sorted.
func (s TestState) PlayerNames() []string {
	var names []string
	for _, p := range s.Players {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// Bots returns the bot players.
func (s TestState) Bots() []TestPlayer {
	var bots []TestPlayer
	for _, p := range s.Players {
		if p.Bot {
			bots = append(bots, p)
		}
	}
	return bots
}

// specialNames are player names that trip clients: non-ASCII text, an
// emoji, an empty name, quotes, backslashes, markup, a 64-character name.
var specialNames = []string{
	"Zoë",
	"Łukasz",
	"日本語プレイヤー",
	"🎮 Pad Player 🚀",
	"",
	`Quote "Q" Player`,
	`Back\slash\Player`,
	"O'Brien",
	"Ελληνικά",
	"Русский игрок",
	"<b>Bold</b> & Co",
	"^1Colour^7Code",
	strings.Repeat("L", 64),
}

// RichState is the shared interop state: 48 players (2 of them bots with the
// longest connection times, which is how gamedig picks bots), names from
// specialNames, negative and extreme scores, and 220 rules, a tenth of them
// with long values, so that A2S_PLAYER and A2S_RULES need split replies.
func RichState() TestState {
	s := TestState{
		Name:       "queryd interop — Zoë's server 🎮",
		Map:        "de_interop",
		Game:       "queryd interop game",
		Folder:     "interop",
		Version:    "1.2.3",
		MaxPlayers: 64,
		Rules:      richRules(),
	}
	scores := []int32{0, -1, -250, math.MinInt32, math.MaxInt32, 7, 12345}
	for i := 0; i < 46; i++ {
		name := fmt.Sprintf("Regular Player Number %02d", i)
		if i < len(specialNames) {
			name = specialNames[i]
		}
		s.Players = append(s.Players, TestPlayer{
			ID:    uint32(i*3 + 1),
			Name:  name,
			Score: scores[i%len(scores)],
			Ping:  (i * 37) % 1000,
			Time:  float64(10 + i*53),
		})
	}
	for i, name := range []string{"[BOT] Alpha", "[BOT] Bravo"} {
		s.Players = append(s.Players, TestPlayer{
			ID: uint32(1000 + i), Name: name, Score: int32(-3 - i), Time: float64(500000 - i*1000), Bot: true,
		})
	}
	return s
}

// richRules makes 220 rules whose A2S_RULES reply is about 12 KB: about ten
// split fragments, fewer than 16 (woozymasta/a2s reads the fragment count
// from 4 bits).
func richRules() map[string]string {
	rules := map[string]string{
		"mp_timelimit": "30",
		"sv_greeting":  "Grüße aus Köln — 日本語 ✓",
		"sv_quoted":    `say "hello" \ world`,
	}
	for i := 0; len(rules) < 220; i++ {
		v := fmt.Sprintf("value-%03d-%s", i, strings.Repeat("x", i%17))
		if i%10 == 0 {
			v = fmt.Sprintf("long-%03d:", i) + strings.Repeat("abcdefghij", 22)
		}
		rules[fmt.Sprintf("sv_interop_%03d", i)] = v
	}
	return rules
}

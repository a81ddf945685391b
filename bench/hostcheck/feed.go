package main

import (
	"fmt"
	"path/filepath"

	"github.com/queryd/queryd/feed"
)

// feedAll sends each server's socket one replace message (a name, a map,
// four players) and closes it: the servers are then fed and idle.
func feedAll(dir string, n int, prefix string) error {
	if dir == "" {
		return fmt.Errorf("feed: -dir is required")
	}
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("s%03d.sock", i))
		c, err := feed.Dial(path)
		if err != nil {
			return fmt.Errorf("server %d: %w", i, err)
		}
		players := map[string]any{}
		for p := range 4 {
			players[fmt.Sprint(p)] = map[string]any{"name": fmt.Sprintf("Player_%d", p), "score": p, "ping": 20 + p}
		}
		_, err = c.Replace(map[string]any{
			"name": serverName(prefix, i) + " fed", "map": "de_bench", "max_players": 16, "players": players,
		})
		c.Close()
		if err != nil {
			return fmt.Errorf("server %d: %w", i, err)
		}
	}
	fmt.Printf("RESULT fed=%d\n", n)
	return nil
}

package feed_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/state"
)

// ExampleClient feeds queryd the way a game server written in Go would: the
// whole state once, then merge patches as players join, score and leave, a
// ping (send one every few seconds so the feed never goes stale), and a
// message queryd rejects. examples/ holds the same feeder in Node.js,
// Python and shell.
//
// It feeds the daemon whose socket is $QUERYD_EXAMPLE_SOCKET (cmd/queryd's
// examples test runs it so and checks the result with queryd query), or
// else a feed server of its own, so that it runs anywhere. (A variable of
// its own, so that `go test ./...` never feeds a daemon by accident.)
func ExampleClient() {
	path, stop := exampleSocket()
	defer stop()

	c, err := feed.Dial(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	steps := []struct {
		what string
		send func() (uint64, error)
	}{
		{"replace", func() (uint64, error) {
			return c.Replace(map[string]any{
				"name": "Go feeder example", "map": "example_map", "game": "Example Game",
				"max_players": 16,
				"players":     map[string]any{"1": map[string]any{"name": "Alice", "score": 3, "ping": 20}},
				"rules":       map[string]any{"mp_timelimit": "30"},
			})
		}},
		{"Bob joined", func() (uint64, error) { return c.Patch(players("2", map[string]any{"name": "Bob", "ping": 35})) }},
		{"Carol joined", func() (uint64, error) { return c.Patch(players("3", map[string]any{"name": "Carol", "ping": 50})) }},
		{"Bob scored", func() (uint64, error) { return c.Patch(players("2", map[string]any{"score": 10})) }},
		{"Carol left", func() (uint64, error) { return c.Patch(players("3", nil)) }},
		{"ping", c.Ping},
	}
	for _, s := range steps {
		if _, err := s.send(); err != nil {
			fmt.Println(s.what, "failed:", err)
			return
		}
		fmt.Println(s.what + ": ok")
	}

	// A rejected message changes nothing; the connection stays usable.
	_, err = c.Patch(map[string]any{"max_players": -1})
	var rejected *feed.ReplyError
	if errors.As(err, &rejected) {
		fmt.Println("rejected as expected:", rejected.Msg)
	}

	_, doc, err := c.Get()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("players:", playerList(doc))
	// Output:
	// replace: ok
	// Bob joined: ok
	// Carol joined: ok
	// Bob scored: ok
	// Carol left: ok
	// ping: ok
	// rejected as expected: state.max_players: want an integer from 0 to 65535, got -1
	// players: Alice 3, Bob 10
}

// players is a merge patch that sets one player's fields, or removes the
// player when p is nil (a nil map is JSON null).
func players(id string, p map[string]any) map[string]any {
	return map[string]any{"players": map[string]any{id: p}}
}

// playerList lists a state document's players as "name score", by id.
func playerList(doc json.RawMessage) string {
	var st struct {
		Players map[string]struct {
			Name  string
			Score int
		}
	}
	if err := json.Unmarshal(doc, &st); err != nil {
		return err.Error()
	}
	ids := make([]string, 0, len(st.Players))
	for id := range st.Players {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return len(ids[i]) < len(ids[j]) || len(ids[i]) == len(ids[j]) && ids[i] < ids[j] })
	var out []string
	for _, id := range ids {
		out = append(out, fmt.Sprintf("%s %d", st.Players[id].Name, st.Players[id].Score))
	}
	return strings.Join(out, ", ")
}

// exampleSocket returns $QUERYD_EXAMPLE_SOCKET, or starts a feed server of
// its own on a temporary socket.
func exampleSocket() (string, func()) {
	if p := os.Getenv("QUERYD_EXAMPLE_SOCKET"); p != "" {
		return p, func() {}
	}
	dir, err := os.MkdirTemp("", "qdex")
	if err != nil {
		panic(err)
	}
	store, err := state.NewStore(nil, nil)
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "feed.sock")
	srv, err := feed.Listen(feed.Config{Socket: path, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, store)
	if err != nil {
		panic(err)
	}
	go srv.Serve()
	return path, func() { srv.Close(); os.RemoveAll(dir) }
}

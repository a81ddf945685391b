package hostile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/feed"
)

// seen is what a real A2S client reports: the server name and player names.
type seen struct {
	name    string
	players []string
}

// observe asks the daemon A2S_INFO and A2S_PLAYER as a real client would.
func observe(t testing.TB, d *Daemon) seen {
	t.Helper()
	c, err := a2s.Dial(d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Info()
	if err != nil {
		t.Fatalf("A2S_INFO: %v\n%s", err, d.Output())
	}
	pl, err := c.Players()
	if err != nil {
		t.Fatalf("A2S_PLAYER: %v", err)
	}
	s := seen{name: info.Name}
	for _, p := range pl {
		s.players = append(s.players, p.Name)
	}
	slices.Sort(s.players)
	if int(info.Players) != len(pl) {
		t.Errorf("A2S_INFO counts %d players, A2S_PLAYER lists %d", info.Players, len(pl))
	}
	return s
}

// expectSeen fails the test unless a real query shows name and players.
func expectSeen(t testing.TB, d *Daemon, what, name string, players ...string) {
	t.Helper()
	slices.Sort(players)
	got := observe(t, d)
	if got.name != name || !slices.Equal(got.players, players) {
		t.Errorf("after %s: a query shows name %q players %q; want %q %q", what, got.name, got.players, name, players)
	}
}

// getState returns the version and document the feed reports.
func getState(t testing.TB, c *feed.Client) (uint64, string) {
	t.Helper()
	v, doc, err := c.Get()
	if err != nil {
		t.Fatalf("feed get: %v", err)
	}
	return v, string(doc)
}

// TestFeed runs the feed faults against one daemon, each part followed by
// real queries: broken messages, a 10 MB line, half lines, two feeders at
// once, and the game server reconnecting.
func TestFeed(t *testing.T) {
	t.Parallel() // a daemon of its own; it waits on timers and slow clients, not the CPU
	d := StartDaemon(t, nil)
	t.Run("broken messages", func(t *testing.T) { feedBroken(t, d) })
	t.Run("10 MB line", func(t *testing.T) { feedLongLine(t, d) })
	t.Run("half lines", func(t *testing.T) { feedHalfLine(t, d) })
	t.Run("two feeders", func(t *testing.T) { feedInterleaved(t, d) })
	t.Run("reconnect", func(t *testing.T) { feedReconnect(t, d) })
}

// knownState replaces the state with a known one (name, Alice and Bob).
func knownState(t testing.TB, d *Daemon, name string) {
	t.Helper()
	doc := map[string]any{"name": name, "max_players": 16, "players": map[string]any{
		"1": map[string]any{"name": "Alice", "score": 3, "ping": 40},
		"2": map[string]any{"name": "Bob", "score": 5, "ping": 60},
	}}
	if _, err := d.Feed(t).Replace(doc); err != nil {
		t.Fatalf("replace: %v", err)
	}
}

// feedBroken sends every kind of broken message, each followed by a real
// query: a rejected message changes neither the version nor what clients
// see; an accepted one shows in the very next query.
func feedBroken(t *testing.T, d *Daemon) {
	fc := d.Feed(t)
	if _, err := fc.Replace(map[string]any{
		"name": "Fed", "map": "m1", "max_players": 10,
		"players": map[string]any{"1": map[string]any{"name": "Alice", "score": 1, "ping": 10}},
	}); err != nil {
		t.Fatalf("replace: %v", err)
	}
	expectSeen(t, d, "the first replace", "Fed", "Alice")
	v0, doc0 := getState(t, fc)

	rejected := []struct{ name, line string }{
		{"not JSON", `hello`},
		{"cut JSON", `{"op":"patch","state":{"name":"X"`},
		{"JSON array", `[{"op":"ping"}]`},
		{"JSON string", `"patch"`},
		{"two objects", `{"op":"ping"} {"op":"ping"}`},
		{"empty line", ``},
		{"name not a string", `{"op":"patch","state":{"name":5}}`},
		{"max_players a string", `{"op":"patch","state":{"max_players":"many"}}`},
		{"max_players out of range", `{"op":"patch","state":{"max_players":70000}}`},
		{"score not an integer", `{"op":"patch","state":{"players":{"1":{"score":1.5}}}}`},
		{"player id not digits", `{"op":"patch","state":{"players":{"x":{"name":"Eve"}}}}`},
		{"player not an object", `{"op":"patch","state":{"players":{"2":"Eve"}}}`},
		{"players an array", `{"op":"patch","state":{"players":[{"name":"Eve"}]}}`},
		{"NUL in a name", `{"op":"patch","state":{"name":"a\u0000b"}}`},
		{"unknown state field", `{"op":"patch","state":{"nmae":"X"}}`},
		{"unknown message field", `{"op":"patch","state":{"name":"X"},"extra":1}`},
		{"unknown op", `{"op":"frobnicate","state":{"name":"X"}}`},
		{"op not a string", `{"op":7}`},
		{"no op", `{"state":{"name":"X"}}`},
		{"state not an object", `{"op":"replace","state":"X"}`},
		{"replace without state", `{"op":"replace"}`},
		{"invalid UTF-8 in a string", "{\"op\":\"patch\",\"state\":{\"name\":\"\xff\xfeX\"}}"},
		{"invalid UTF-8 outside strings", "{\"op\":\"ping\"}\xc0"},
		{"good field then bad field", `{"op":"patch","state":{"name":"Half","max_players":"x"}}`},
		{"good player then bad player", `{"op":"patch","state":{"players":{"7":{"name":"Gus"},"8":{"name":"Hal","ping":1.5}}}}`},
		{"folder too long", `{"op":"patch","state":{"folder":"` + strings.Repeat("f", 129) + `"}}`},
		{"name to cut, then a bad field", `{"op":"patch","state":{"name":"` + strings.Repeat("n", 300) + `","max_players":3.5}}`},
		{"deep nesting", `{"op":"patch","state":{"values":` + strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200) + `}}`},
	}
	for _, r := range rejected {
		rep, err := fc.Send([]byte(r.line))
		var re *feed.ReplyError
		if !errors.As(err, &re) || rep.OK || rep.Error == "" {
			t.Errorf("%s: reply %+v, err %v; want a rejection with an error", r.name, rep, err)
			continue
		}
		if v, doc := getState(t, fc); v != v0 || doc != doc0 {
			t.Errorf("%s: rejected (%s) but the state moved from version %d to %d", r.name, rep.Error, v0, v)
		}
		expectSeen(t, d, r.name+" (rejected)", "Fed", "Alice")
	}

	// Accepted messages show at once.
	v, err := fc.Patch(map[string]any{"name": "Patched", "players": map[string]any{"2": map[string]any{"name": "Bob"}}})
	if err != nil || v != v0+1 {
		t.Fatalf("patch: version %d, %v; want %d", v, err, v0+1)
	}
	expectSeen(t, d, "a patch", "Patched", "Alice", "Bob")
	if _, err := fc.Patch(map[string]any{"players": map[string]any{"1": nil}}); err != nil {
		t.Fatal(err)
	}
	expectSeen(t, d, "removing a player", "Patched", "Bob")
	if _, err := fc.Ping(); err != nil {
		t.Fatal(err)
	}
	expectSeen(t, d, "a ping", "Patched", "Bob")
}

// feedLongLine sends a 10 MB line: the daemon rejects it with an error
// line, closes that connection, keeps the state and keeps serving.
func feedLongLine(t *testing.T, d *Daemon) {
	knownState(t, d, "Long")
	fc := d.Feed(t)
	v0, doc0 := getState(t, fc)
	conn, err := net.Dial("unix", d.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	line := append([]byte(`{"op":"patch","state":{"name":"`), bytes.Repeat([]byte("x"), 10<<20)...)
	line = append(line, `"}}`+"\n"...)
	writeErr := make(chan error, 1)
	go func() {
		_, err := conn.Write(line)
		writeErr <- err
	}()
	r := bufio.NewReader(conn)
	reply, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("no reply line to a 10 MB line: %v", err)
	}
	var rep feed.Reply
	if err := json.Unmarshal(reply, &rep); err != nil || rep.OK || !strings.Contains(rep.Error, "longer than") {
		t.Errorf("reply to a 10 MB line: %s (%v); want ok:false naming the limit", reply, err)
	}
	if _, err := r.ReadByte(); err == nil {
		t.Errorf("the connection stayed open after the long line")
	}
	t.Logf("10 MB line: reply %s; writer: %v", bytes.TrimSpace(reply), <-writeErr)
	if v, doc := getState(t, fc); v != v0 || doc != doc0 {
		t.Errorf("the state moved from version %d to %d", v0, v)
	}
	expectSeen(t, d, "a 10 MB line", "Long", "Alice", "Bob")
	if _, err := d.Feed(t).Patch(map[string]any{"name": "After"}); err != nil {
		t.Errorf("a new feed connection after the long line: %v", err)
	}
	expectSeen(t, d, "a patch after the long line", "After", "Alice", "Bob")
}

// feedHalfLine writes half a message and disconnects: nothing applies.
func feedHalfLine(t *testing.T, d *Daemon) {
	knownState(t, d, "Half")
	fc := d.Feed(t)
	v0, doc0 := getState(t, fc)
	for _, half := range []string{`{"op":"patch","state":{"name":"Ha`, `{"op":"replace","state":{"name":"Whole"}}`} {
		conn, err := net.Dial("unix", d.Socket)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, half); err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}
	time.Sleep(200 * time.Millisecond)
	if v, doc := getState(t, fc); v != v0 || doc != doc0 {
		t.Errorf("a line without its newline moved the state from version %d to %d", v0, v)
	}
	expectSeen(t, d, "half lines", "Half", "Alice", "Bob")
}

// feedInterleaved has two feeders patch different players at the same
// time: every patch applies whole, versions rise by one per patch, and the
// next query shows both feeders' players.
func feedInterleaved(t *testing.T, d *Daemon) {
	const each = 40
	_, err := d.Feed(t).Replace(map[string]any{"name": "Two feeders", "max_players": 200})
	if err != nil {
		t.Fatal(err)
	}
	v0, _ := getState(t, d.Feed(t))
	var wg sync.WaitGroup
	versions := make([][]uint64, 2)
	var want []string
	for f := 0; f < 2; f++ {
		c := d.Feed(t)
		for i := 0; i < each; i++ {
			want = append(want, fmt.Sprintf("f%d-%02d", f, i))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id := fmt.Sprint(100*(f+1) + i)
				v, err := c.Patch(map[string]any{
					"players": map[string]any{id: map[string]any{"name": fmt.Sprintf("f%d-%02d", f, i), "score": i}},
					"rules":   map[string]any{fmt.Sprintf("feeder%d", f): fmt.Sprint(i)},
				})
				if err != nil {
					t.Errorf("feeder %d patch %d: %v", f, i, err)
					return
				}
				versions[f] = append(versions[f], v)
			}
		}()
	}
	wg.Wait()
	all := append(append([]uint64{}, versions[0]...), versions[1]...)
	slices.Sort(all)
	for i, v := range all {
		if v != v0+uint64(i)+1 {
			t.Fatalf("versions of the two feeders' patches: %v; want each of %d..%d once", all, v0+1, v0+2*each)
		}
	}
	expectSeen(t, d, "two feeders' patches", "Two feeders", want...)
	c, err := a2s.Dial(d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rules, err := c.Rules()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rules {
		got[r[0]] = r[1]
	}
	if got["feeder0"] != fmt.Sprint(each-1) || got["feeder1"] != fmt.Sprint(each-1) {
		t.Errorf("rules after both feeders: feeder0=%q feeder1=%q; want %d each", got["feeder0"], got["feeder1"], each-1)
	}
}

// feedReconnect: the game server disconnects (the state stays), then
// reconnects and feeds again (visible at once).
func feedReconnect(t *testing.T, d *Daemon) {
	c1, err := feed.Dial(d.Socket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c1.Replace(map[string]any{"name": "Before", "players": map[string]any{"5": map[string]any{"name": "Eve"}}}); err != nil {
		t.Fatal(err)
	}
	c1.Close()
	time.Sleep(100 * time.Millisecond)
	expectSeen(t, d, "the game server disconnected", "Before", "Eve")
	c2 := d.Feed(t)
	if _, err := c2.Patch(map[string]any{"name": "After", "players": map[string]any{"6": map[string]any{"name": "Fay"}}}); err != nil {
		t.Fatal(err)
	}
	expectSeen(t, d, "the game server reconnected and patched", "After", "Eve", "Fay")
	if _, err := c2.Replace(map[string]any{"name": "Replaced"}); err != nil {
		t.Fatal(err)
	}
	expectSeen(t, d, "a replace without players", "Replaced")
}

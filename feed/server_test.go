package feed

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryd/queryd/state"
)

// start runs a feed server on a socket in a fresh temp dir.
func start(t *testing.T, cfg Config) (*Server, *state.Store) {
	t.Helper()
	store, err := state.NewStore(map[string]any{"name": "base"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Socket == "" {
		cfg.Socket = filepath.Join(shortDir(t), "feed.sock")
	}
	s, err := Listen(cfg, store)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s, store
}

// shortDir is a temp dir with a path short enough for a Unix socket.
func shortDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "qf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// conn is a raw feed connection for exact-line tests.
type conn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, path string) *conn {
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	return &conn{c: c, r: bufio.NewReader(c)}
}

func (c *conn) roundTrip(t *testing.T, line string) Reply {
	t.Helper()
	if _, err := c.c.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
	return c.read(t)
}

func (c *conn) read(t *testing.T) Reply {
	t.Helper()
	b, err := c.r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var r Reply
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("reply %q: %v", b, err)
	}
	return r
}

func TestMessages(t *testing.T) {
	s, store := start(t, Config{})
	c := dialRaw(t, s.Path())
	if r := c.roundTrip(t, `{"op":"replace","state":{"map":"m1","players":{"1":{"name":"a"}}}}`); !r.OK || r.Version != 2 {
		t.Fatalf("replace: %+v", r)
	}
	if r := c.roundTrip(t, `{"op":"patch","state":{"players":{"2":{"name":"b"}}}}`); !r.OK || r.Version != 3 {
		t.Fatalf("patch: %+v", r)
	}
	if r := c.roundTrip(t, `{"op":"ping"}`); !r.OK || r.Version != 3 {
		t.Fatalf("ping: %+v", r)
	}
	r := c.roundTrip(t, `{"op":"get"}`)
	var st map[string]any
	if err := json.Unmarshal(r.State, &st); err != nil || !r.OK || st["map"] != "m1" || st["name"] != "base" {
		t.Fatalf("get: %+v %v", r, err)
	}
	if n := len(store.Snapshot().Players); n != 2 {
		t.Fatalf("%d players", n)
	}
	if r := c.roundTrip(t, `{"op":"peer","port":5}`); r.OK || !strings.Contains(r.Error, "relay") {
		t.Fatalf("peer without relay: %+v", r)
	}
}

func TestRejectedMessagesKeepConnection(t *testing.T) {
	s, store := start(t, Config{})
	c := dialRaw(t, s.Path())
	before := store.Snapshot()
	for line, want := range map[string]string{
		`not json`:                          "not a JSON object",
		`[1,2]`:                             "not a JSON object",
		`{"op":"dance"}`:                    "unknown op",
		`{"op":1}`:                          `"op"`,
		`{"state":{}}`:                      `"op"`,
		`{"op":"replace"}`:                  `"state"`,
		`{"op":"patch","state":[]}`:         `"state"`,
		`{"op":"ping","extra":1}`:           "unknown field",
		`{"op":"patch","state":{"name":5}}`: "state.name: want a string",
		`{"op":"patch","state":{"players":{"a":{}}}}`: "state.players.a",
		`{"op":"ping"} {"op":"ping"}`:                 "trailing data",
		"   ":                                         "empty line",
		"{\"op\":\"patch\",\"state\":{\"name\":\"\xff\"}}": "UTF-8",
		`{"op":"peer","port":0}`:                           `"port"`,
		`{"op":"peer","port":5,"addr":"x"}`:                `"addr"`,
		`{"op":"peer","port":5,"addr":7}`:                  `"addr"`,
	} {
		r := c.roundTrip(t, line)
		if r.OK || !strings.Contains(r.Error, want) {
			t.Errorf("%q: got %+v, want an error with %q", line, r, want)
		}
	}
	if store.Snapshot() != before {
		t.Fatal("rejected messages changed the state")
	}
	if r := c.roundTrip(t, `{"op":"ping"}`); !r.OK {
		t.Fatal("the connection must stay usable after errors")
	}
}

func TestLongLineClosesConnection(t *testing.T) {
	s, store := start(t, Config{})
	c := dialRaw(t, s.Path())
	before := store.Snapshot()
	big := `{"op":"patch","state":{"name":"` + strings.Repeat("x", MaxLine) + `"}}` + "\n"
	go c.c.Write([]byte(big)) // the server stops reading; don't block on it
	r := c.read(t)
	if r.OK || !strings.Contains(r.Error, "longer than") {
		t.Fatalf("%+v", r)
	}
	if _, err := c.r.ReadBytes('\n'); err == nil {
		t.Fatal("the connection must be closed after an over-long line")
	}
	if store.Snapshot() != before {
		t.Fatal("state changed")
	}
	// A line of exactly MaxLine bytes is accepted (and rejected for its content only).
	c2 := dialRaw(t, s.Path())
	exact := `{"op":"ping","x":"` + strings.Repeat("y", MaxLine-len(`{"op":"ping","x":""}`)) + `"}`
	if len(exact) != MaxLine {
		t.Fatal(len(exact))
	}
	if r := c2.roundTrip(t, exact); r.OK || !strings.Contains(r.Error, "unknown field") {
		t.Fatalf("%+v", r.Error)
	}
}

func TestHalfLineThenDisconnect(t *testing.T) {
	s, store := start(t, Config{})
	c := dialRaw(t, s.Path())
	c.c.Write([]byte(`{"op":"replace","state":{"name":"half"}}`)) // no newline
	c.c.Close()
	cl, err := Dial(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Ping(); err != nil {
		t.Fatal(err)
	}
	if store.Snapshot().Name != "base" {
		t.Fatal("a half line must not be applied")
	}
}

func TestConcurrentFeeders(t *testing.T) {
	s, store := start(t, Config{})
	var wg sync.WaitGroup
	for f := 0; f < 4; f++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := Dial(s.Path())
			if err != nil {
				t.Error(err)
				return
			}
			defer cl.Close()
			for i := 0; i < 50; i++ {
				id := f*100 + i
				if _, err := cl.Patch(map[string]any{"players": map[string]any{itoa(id): map[string]any{"name": "p"}}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := len(store.Snapshot().Players); n != 200 {
		t.Fatalf("%d players after 200 patches from 4 feeders", n)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestClient(t *testing.T) {
	s, _ := start(t, Config{})
	cl, err := Dial(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	v, err := cl.Replace(map[string]any{"name": "go", "players": map[string]any{"1": map[string]any{"name": "a"}}})
	if err != nil || v != 2 {
		t.Fatal(v, err)
	}
	_, err = cl.Patch(map[string]any{"max_players": "many"})
	var re *ReplyError
	if !errors.As(err, &re) || !strings.Contains(re.Msg, "max_players") {
		t.Fatalf("%v", err)
	}
	v, doc, err := cl.Get()
	if err != nil || v != 2 || !strings.Contains(string(doc), `"go"`) {
		t.Fatal(v, string(doc), err)
	}
}

func TestSocketPath(t *testing.T) {
	dir := shortDir(t)
	store, _ := state.NewStore(nil, nil)

	// A regular file in the way is refused and left untouched.
	file := filepath.Join(dir, "file.sock")
	os.WriteFile(file, []byte("keep me"), 0o600)
	if _, err := Listen(Config{Socket: file}, store); err == nil || !strings.Contains(err.Error(), "regular file") {
		t.Fatalf("regular file: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep me" {
		t.Fatal("the file in the way was changed")
	}

	// A stale socket file is replaced; a live one is refused.
	path := filepath.Join(dir, "feed.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(Config{Socket: path}, store); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Fatalf("live socket: %v", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	s, err := Listen(Config{Socket: path, Mode: 0o640}, store)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}
	s.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatal("Close must remove the socket file")
	}
	s, err = Listen(Config{Socket: path}, store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o660 {
		t.Fatalf("default mode %v, want 0660", fi.Mode().Perm())
	}
}

func TestStale(t *testing.T) {
	s, _ := start(t, Config{StaleAfter: 100 * time.Millisecond})
	now := time.Now()
	if s.Stale(now.Add(time.Hour)) {
		t.Fatal("a feed that never spoke is not stale")
	}
	cl, err := Dial(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cl.Ping()
	if s.Stale(time.Now()) {
		t.Fatal("stale right after a ping")
	}
	if !s.Stale(time.Now().Add(200 * time.Millisecond)) {
		t.Fatal("not stale after stale_after of quiet")
	}
	cl.Ping()
	if s.Stale(time.Now()) {
		t.Fatal("a message must end staleness")
	}
}

func FuzzParseMessage(f *testing.F) {
	for _, seed := range []string{
		`{"op":"replace","state":{"name":"x"}}`, `{"op":"patch","state":{"players":{"1":null}}}`,
		`{"op":"ping"}`, `{"op":"get"}`, `{"op":"peer","port":27960}`, `{"op":"peer","port":"1"}`,
		`{}`, `[]`, `"x"`, "\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := parseMessage(line)
		if err != nil {
			return
		}
		switch m.op {
		case "replace", "patch":
			if m.state == nil {
				t.Fatal("accepted without a state")
			}
		case "peer":
			if m.port < 1 || m.port > 65535 {
				t.Fatal("accepted a bad port")
			}
		case "ping", "get":
		default:
			t.Fatalf("accepted op %q", m.op)
		}
	})
}

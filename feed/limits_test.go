package feed

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/state"
)

// waitUntil polls cond every 5 ms until it holds or limit passes.
func waitUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

// TestMaxConns: with MaxConns 2, a third connection gets the error line
// and is closed while the two are served; closing one makes room.
func TestMaxConns(t *testing.T) {
	s, _ := start(t, Config{MaxConns: 2})
	a, b := dialRaw(t, s.Path()), dialRaw(t, s.Path())
	for _, c := range []*conn{a, b} {
		if r := c.roundTrip(t, `{"op":"ping"}`); !r.OK {
			t.Fatalf("ping: %+v", r)
		}
	}
	third := dialRaw(t, s.Path())
	r := third.read(t)
	if r.OK || !strings.Contains(r.Error, "too many feed connections (2 open, [feed] max_conns)") {
		t.Fatalf("third connection: %+v", r)
	}
	if _, err := third.r.ReadByte(); err == nil {
		t.Fatal("the refused connection stays open")
	}
	if got := s.Stats().Dropped[DropMaxConns]; got != 1 {
		t.Fatalf("dropped for max_conns: %d, want 1", got)
	}
	a.c.Close()
	if !waitUntil(2*time.Second, func() bool { return s.Stats().Open == 1 }) {
		t.Fatalf("%d connections open after one of two closed", s.Stats().Open)
	}
	if r := dialRaw(t, s.Path()).roundTrip(t, `{"op":"ping"}`); !r.OK {
		t.Fatalf("a new connection once there is room: %+v", r)
	}
	if r := b.roundTrip(t, `{"op":"ping"}`); !r.OK {
		t.Fatalf("the second connection after the refusals: %+v", r)
	}
}

// TestMaxBuffered: two connections' unfinished lines may not hold more
// than MaxBuffered together; the one that would pass it gets the error line
// and is closed, the other finishes its line, and the budget is all back.
func TestMaxBuffered(t *testing.T) {
	s, _ := start(t, Config{MaxBuffered: 300 << 10})
	part := []byte(`{"op":"ping","pad":"` + strings.Repeat("x", 200<<10))
	a, b := dialRaw(t, s.Path()), dialRaw(t, s.Path())
	if _, err := a.c.Write(part); err != nil {
		t.Fatal(err)
	}
	if !waitUntil(2*time.Second, func() bool { return s.Stats().Buffered >= 200<<10 }) {
		t.Fatalf("buffered %d after a 200 KiB partial line", s.Stats().Buffered)
	}
	go b.c.Write(part) // the server stops reading it
	r := b.read(t)
	if r.OK || !strings.Contains(r.Error, "feed buffers full") || !strings.Contains(r.Error, "307200 bytes ([feed] max_buffered)") {
		t.Fatalf("over the budget: %+v", r)
	}
	if got := s.Stats().Dropped[DropMaxBuffered]; got != 1 {
		t.Fatalf("dropped for max_buffered: %d, want 1", got)
	}
	if _, err := a.c.Write([]byte("\"}\n")); err != nil {
		t.Fatal(err)
	}
	if r := a.read(t); r.OK || !strings.Contains(r.Error, "pad") {
		t.Fatalf("the first connection's line: %+v (want it parsed: unknown field pad)", r)
	}
	if r := a.roundTrip(t, `{"op":"ping"}`); !r.OK {
		t.Fatalf("ping after the long line: %+v", r)
	}
	if got := s.Stats().Buffered; got != 0 {
		t.Fatalf("buffered %d after every line finished, want 0", got)
	}
}

// TestLineTimeout: an unfinished line gets the error line after
// LineTimeout and the connection closes; a connection idle between lines
// for longer is still served; a line trickled in pieces is timed from its
// first byte.
func TestLineTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	s, _ := start(t, Config{LineTimeout: timeout})
	idle := dialRaw(t, s.Path())
	half := dialRaw(t, s.Path())
	begin := time.Now()
	half.c.Write([]byte(`{"op":"pi`))
	r := half.read(t)
	took := time.Since(begin)
	if r.OK || !strings.Contains(r.Error, "line not completed within 300ms ([feed] line_timeout)") {
		t.Fatalf("unfinished line: %+v", r)
	}
	if took < timeout || took > timeout+time.Second {
		t.Fatalf("unfinished line closed after %v, want about %v", took, timeout)
	}
	if r := idle.roundTrip(t, `{"op":"ping"}`); !r.OK {
		t.Fatalf("a connection idle for %v: %+v", took, r)
	}
	trickle := dialRaw(t, s.Path())
	begin = time.Now()
	go func() {
		for _, b := range []byte(`{"op":"ping"}`) {
			if _, err := trickle.c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(timeout / 4)
		}
	}()
	if r := trickle.read(t); r.OK || !strings.Contains(r.Error, "line not completed") {
		t.Fatalf("a line trickled over %v: %+v", 13*timeout/4, r)
	}
	if took := time.Since(begin); took > timeout+time.Second {
		t.Fatalf("trickled line closed after %v: the deadline was renewed by its pieces", took)
	}
	if got := s.Stats().Dropped[DropLineTimeout]; got != 2 {
		t.Fatalf("dropped for line_timeout: %d, want 2", got)
	}
}

// TestReplyTimeout: a peer that sends but never reads its replies is closed
// once a reply has waited LineTimeout, instead of holding its goroutine and
// buffers for ever.
func TestReplyTimeout(t *testing.T) {
	s, _ := start(t, Config{LineTimeout: 200 * time.Millisecond})
	c := dialRaw(t, s.Path())
	pings := bytes.Repeat([]byte(`{"op":"ping"}`+"\n"), 100_000) // 2.5 MB of replies: more than the socket buffers
	c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	go c.c.Write(pings)
	if !waitUntil(5*time.Second, func() bool { return s.Stats().Dropped[DropLineTimeout] == 1 }) {
		t.Fatalf("a peer not reading its replies was not closed: %+v", s.Stats())
	}
	if !waitUntil(2*time.Second, func() bool { return s.Stats().Open == 0 }) {
		t.Fatalf("%d connections still open", s.Stats().Open)
	}
}

// TestServeEndsOnBrokenListener: an accept error that is not a passing
// shortage ends Serve with the error (the daemon then exits non-zero);
// Close ends it with nil.
func TestServeEndsOnBrokenListener(t *testing.T) {
	store, _ := state.NewStore(nil, nil)
	s, err := Listen(Config{Socket: filepath.Join(shortDir(t), "f.sock")}, store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	s.ln.Listener.Close() // broken under it, not closed by Close
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "feed accept") {
			t.Fatalf("Serve on a broken listener: %v, want an error", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Serve did not return on a broken listener")
	}
	s2, err := Listen(Config{Socket: filepath.Join(shortDir(t), "f.sock")}, store)
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- s2.Serve() }()
	s2.Close()
	if err := <-done; err != nil {
		t.Fatalf("Serve after Close: %v, want nil", err)
	}
}

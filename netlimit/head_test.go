package netlimit

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// headConns accepts n connections through l, each from a client that has
// sent what sends holds (the same index), and returns the server's ends.
func headConns(t *testing.T, l *Listener, raw net.Listener, sends ...string) []net.Conn {
	t.Helper()
	var srv []net.Conn
	for _, s := range sends {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, s)
		sc, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sc.Close() })
		srv = append(srv, sc)
	}
	return srv
}

// readSome reads once from c, as the server reading a request head does.
func readSome(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := c.Read(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
}

// A new connection over the threshold closes only a connection the server
// is waiting on for its request head: not one it has not started reading
// yet (on a busy machine its goroutine may not have run: it may hold a
// whole request with the token, which is how the game server's patch was
// reset in TestFeedHTTPTrickle), nor one whose head is in (it is being
// answered). Before, the oldest unproven went, whatever it held.
func TestShedOnlyWaitedOn(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &Listener{Listener: raw, Max: 8}
	defer l.Close()
	s := &Shedder{Listener: l, Threshold: 1, Unproven: true}
	whole := "PATCH /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer x\r\nContent-Length: 2\r\n\r\n{}"
	bare := "GET / HTTP/1.1\n\n"
	slow := "PUT /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
	cs := headConns(t, l, raw, whole, whole, bare, slow, slow)
	unread, readWhole, readBare, trickler, newcomer := cs[0], cs[1], cs[2], cs[3], cs[4]

	s.ConnState(unread, http.StateNew)
	s.ConnState(readWhole, http.StateNew)
	readSome(t, readWhole) // its head is in; Active comes after the parse
	s.ConnState(readBare, http.StateNew)
	readSome(t, readBare)
	s.ConnState(trickler, http.StateNew)
	readSome(t, trickler) // half a head: the server waits on it
	s.ConnState(trickler, http.StateActive)
	if got := s.Shed(); got != 0 {
		t.Fatalf("shed %d before the trickler was read, want 0 (none waited on)", got)
	}
	s.ConnState(newcomer, http.StateNew) // 5 open, threshold 1: only the trickler may go
	if got := s.Shed(); got != 1 {
		t.Fatalf("shed %d, want 1 (the trickler)", got)
	}
	if _, err := trickler.Read(make([]byte, 1)); err == nil {
		t.Error("the trickler is open")
	}
	for i, c := range []net.Conn{unread, readWhole, readBare} {
		if all, _ := s.Tracked(); all != 4 {
			t.Fatalf("tracked %d, want 4", all)
		}
		if _, err := c.Write(nil); err != nil {
			t.Errorf("connection %d (unread, whole head, bare-LF head) was closed: %v", i, err)
		}
	}

	// Between requests the head is forgotten: idle, it goes like any other.
	s.ConnState(readWhole, http.StateActive)
	s.ConnState(readWhole, http.StateIdle)
	s.ConnState(newcomer, http.StateNew) // again over: readWhole is idle now
	if got := s.Shed(); got != 2 {
		t.Fatalf("shed %d, want 2 (the trickler, then the idle one)", got)
	}
}

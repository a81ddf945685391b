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

// A new connection over the threshold closes a connection the server is
// waiting on for its request head first: not one it has not started
// reading yet (on a busy machine its goroutine may not have run: it may
// hold a whole request with the token, which is how the game server's
// patch was reset in TestFeedHTTPTrickle) unless nothing else can go, and
// never one whose head is in (it is being answered). Before, the oldest
// idle or unproven went, whatever it held.
func TestShedOnlyWaitedOn(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &Listener{Listener: raw, Max: 8}
	defer l.Close()
	s := &Shedder{Listener: l, Threshold: 4, Unproven: true}
	whole := "PATCH /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer x\r\nContent-Length: 2\r\n\r\n{}"
	bare := "GET / HTTP/1.1\n\n"
	slow := "PUT /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
	closed := func(c net.Conn) bool { _, err := c.Write(nil); return err != nil }
	accept := func(send string) net.Conn { // accepted and new, as the server's loop does
		c := headConns(t, l, raw, send)[0]
		s.ConnState(c, http.StateNew)
		return c
	}

	unread := accept(whole)
	readWhole := accept(whole)
	readSome(t, readWhole) // its head is in; Active comes after the parse
	readBare := accept(bare)
	readSome(t, readBare)
	trickler := accept(slow)
	readSome(t, trickler) // half a head: the server waits on it
	s.ConnState(trickler, http.StateActive)
	newcomer := accept(slow) // 5 open, threshold 4: the trickler goes
	if got := s.Shed(); got != 1 || !closed(trickler) {
		t.Fatalf("shed %d (the trickler closed: %v), want 1, the trickler", got, closed(trickler))
	}
	for i, c := range []net.Conn{unread, readWhole, readBare} {
		if closed(c) {
			t.Errorf("connection %d (unread, whole head, bare-LF head) was closed", i)
		}
	}

	readSome(t, newcomer) // waited on too now
	accept(slow)
	if got := s.Shed(); got != 2 || !closed(newcomer) || closed(unread) {
		t.Fatalf("shed %d (newcomer closed %v, unread closed %v), want 2: the newcomer, waited on", got, closed(newcomer), closed(unread))
	}
	// Nothing waited on: a connection not read yet goes before the cap
	// fills with them, but not one whose request waits in its receive
	// queue (the server has yet to read what was sent: perhaps the
	// token); those with their heads in stay.
	empty := accept("")
	if got := s.Shed(); got != 2 {
		t.Fatalf("shed %d, want 2: the newest connection is kept", got)
	}
	accept(slow)
	if got := s.Shed(); got != 3 || !closed(empty) || closed(unread) || closed(readWhole) || closed(readBare) {
		t.Fatalf("shed %d (empty closed %v, unread closed %v), want 3: the one that sent nothing, never bytes unread or a head read",
			got, closed(empty), closed(unread))
	}

	// Between requests the head is forgotten: idle, it goes like any other.
	s.ConnState(readWhole, http.StateActive)
	s.ConnState(readWhole, http.StateIdle)
	accept(slow)
	if got := s.Shed(); got != 4 || !closed(readWhole) {
		t.Fatalf("shed %d, want 4: the idle one", got)
	}
}

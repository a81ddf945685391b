package netlimit

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// shedServer serves HTTP on loopback through a Listener with max slots and a
// Shedder; the handler of /slow blocks until release is closed.
func shedServer(t *testing.T, max int) (addr string, l *Listener, s *Shedder, release chan struct{}) {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l = &Listener{Listener: raw, Max: max, Reject: func(c net.Conn) {
		c.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
		c.Close()
	}}
	s = &Shedder{Listener: l}
	release = make(chan struct{})
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				<-release
			}
			io.WriteString(w, "ok")
		}),
		ConnState:   s.ConnState,
		IdleTimeout: time.Minute,
	}
	go srv.Serve(l)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		srv.Close()
	})
	return raw.Addr().String(), l, s, release
}

// get sends a GET on c and reads the response; the connection stays open.
func get(c net.Conn, path string) (int, error) {
	c.SetDeadline(time.Now().Add(3 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return 0, err
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

// closedByServer reports whether the server has closed c (a read ends in
// EOF or a reset rather than waiting).
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	defer c.SetReadDeadline(time.Time{})
	var b [1]byte
	_, err := c.Read(b[:])
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func waitOpen(t *testing.T, l *Listener, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for l.Open() != want {
		if time.Now().After(deadline) {
			t.Fatalf("open connections %d, want %d", l.Open(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func dialTCP(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitBusy waits until n tracked connections are busy.
func waitBusy(t *testing.T, s *Shedder, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		if all, idle := s.Tracked(); all-idle == n {
			return
		}
		if time.Now().After(deadline) {
			all, idle := s.Tracked()
			t.Fatalf("%d busy connections, want %d", all-idle, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// slow starts a request on c that the server holds until release.
func slow(c net.Conn) { io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n") }

// want503 reads a 503 from c.
func want503(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != 503 {
		t.Fatalf("over the cap: %v %v, want a 503", res, err)
	}
}

// TestShedIdleOldestFirst: Max 8, so shedding starts past 6 open. Six
// keep-alive connections idle after a request; each new one closes the
// oldest idle one; a busy one is never closed; the cap is reached only when
// the connections over the threshold are busy, and then a new one gets 503.
func TestShedIdleOldestFirst(t *testing.T) {
	addr, l, s, release := shedServer(t, 8)
	var idle []net.Conn
	for i := 0; i < 6; i++ {
		c := dialTCP(t, addr)
		if code, err := get(c, "/"); err != nil || code != 200 {
			t.Fatalf("conn %d: %d %v", i, code, err)
		}
		idle = append(idle, c)
		waitBusy(t, s, 0) // idle in this order
	}
	waitOpen(t, l, 6)
	if s.Shed() != 0 {
		t.Fatalf("shed %d at the threshold, want 0", s.Shed())
	}
	// A new connection (7 open) closes the oldest idle one, and only it.
	c7 := dialTCP(t, addr)
	if code, err := get(c7, "/"); err != nil || code != 200 {
		t.Fatalf("7th: %d %v", code, err)
	}
	if !closedByServer(idle[0]) || closedByServer(idle[1]) {
		t.Fatal("the 7th connection did not close the oldest idle one (and only it)")
	}
	waitOpen(t, l, 6)
	// Busy connections are never shed.
	busy := idle[1:]
	for _, c := range busy {
		slow(c)
	}
	waitBusy(t, s, 5)
	c8 := dialTCP(t, addr) // sheds c7, the only idle one
	waitOpen(t, l, 6)
	if !closedByServer(c7) {
		t.Fatal("the idle 7th connection was not shed for a newer one")
	}
	slow(c8)
	waitBusy(t, s, 6)
	c9 := dialTCP(t, addr) // nothing idle to shed: 7 open
	waitOpen(t, l, 7)
	c10 := dialTCP(t, addr) // sheds c9
	waitOpen(t, l, 7)
	if !closedByServer(c9) {
		t.Fatal("the idle 9th connection was not shed for the 10th")
	}
	slow(c10)
	waitBusy(t, s, 7)
	dialTCP(t, addr) // the 8th slot
	waitOpen(t, l, 8)
	want503(t, dialTCP(t, addr))
	if l.Rejected() != 1 || s.Shed() != 3 {
		t.Fatalf("rejected %d, shed %d; want 1, 3", l.Rejected(), s.Shed())
	}
	for _, c := range append(busy, c8, c10) {
		if closedByServer(c) {
			t.Fatal("a busy connection was closed")
		}
	}
	close(release)
	for _, c := range append(busy, c8, c10) {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if res, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || res.StatusCode != 200 {
			t.Fatalf("a busy connection: %v %v", res, err)
		}
	}
}

// TestNoShedWithoutMax: with no cap (Max 0) and no Threshold nothing is shed.
func TestNoShedWithoutMax(t *testing.T) {
	addr, l, s, _ := shedServer(t, 0)
	for i := 0; i < 10; i++ {
		dialTCP(t, addr)
	}
	waitOpen(t, l, 10)
	if s.Shed() != 0 {
		t.Fatalf("shed %d without a cap", s.Shed())
	}
}

// TestRejectAtCapWhenBusy: when every slot is busy, a new connection gets
// the 503 and is closed; nothing idle is there to shed.
func TestRejectAtCapWhenBusy(t *testing.T) {
	addr, l, s, release := shedServer(t, 4)
	var busy []net.Conn
	for i := 0; i < 4; i++ {
		c := dialTCP(t, addr)
		slow(c)
		busy = append(busy, c)
		waitBusy(t, s, i+1)
	}
	waitOpen(t, l, 4)
	want503(t, dialTCP(t, addr))
	if l.Rejected() != 1 || s.Shed() != 0 {
		t.Fatalf("rejected %d, shed %d; want 1, 0", l.Rejected(), s.Shed())
	}
	close(release)
	for _, b := range busy {
		b.SetReadDeadline(time.Now().Add(2 * time.Second))
		if res, err := http.ReadResponse(bufio.NewReader(b), nil); err != nil || res.StatusCode != 200 {
			t.Fatalf("a busy connection: %v %v", res, err)
		}
	}
}

// A connection whose request is Waiting (for a rate limit's turn) counts
// as idle: a new connection over the threshold may close it, as it closes
// one between requests (an Active one it may not: without Waiting the
// tracked idle count is 1, not 2).
func TestShedderWaiting(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &Listener{Listener: raw, Max: 3}
	s := &Shedder{Listener: l, Threshold: 2}
	waiting, release := make(chan func()), make(chan struct{})
	srv := &http.Server{
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/wait" {
				done := s.Waiting(r.Context().Value(connKey{}).(net.Conn))
				waiting <- done
				<-release
				done()
			}
			io.WriteString(w, "ok")
		}),
		ConnState: s.ConnState,
	}
	go srv.Serve(l)
	defer srv.Close()
	defer close(release)
	addr := raw.Addr().String()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	first := dial()
	go get(first, "/other") // answered at once, then idle between requests
	waitOpen(t, l, 1)
	time.Sleep(50 * time.Millisecond)
	w := dial()
	go io.WriteString(w, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	<-waiting
	if all, idle := s.Tracked(); all != 2 || idle != 2 {
		t.Fatalf("tracked %d, idle %d: want the waiting connection idle too", all, idle)
	}
	dial() // the third: over the threshold, the one idle longest (first) goes
	waitOpen(t, l, 2)
	dial() // the fourth: the waiting one goes
	waitOpen(t, l, 2)
	if !closedByServer(w) {
		t.Error("the waiting connection was not closed for a new one")
	}
}

type connKey struct{}

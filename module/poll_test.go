package module

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// PollConn binds a loopback poll to 127.0.0.1 on a new port each time,
// connected to the server; Drain discards what came before a request
// (here, three datagrams the server sent first) and nothing after.
func TestPollConnAndDrain(t *testing.T) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 9)})
	if err != nil {
		t.Skipf("no 127.0.0.9 here: %v", err)
	}
	defer srv.Close()
	server := srv.LocalAddr().(*net.UDPAddr).AddrPort()
	a, err := PollConn(server)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := PollConn(server)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	la, lb := a.LocalAddr().(*net.UDPAddr).AddrPort(), b.LocalAddr().(*net.UDPAddr).AddrPort()
	if la.Addr() != netip.MustParseAddr("127.0.0.1") || la.Port() == lb.Port() {
		t.Fatalf("local addresses %s and %s: want 127.0.0.1 and two ports", la, lb)
	}
	for range 3 {
		if _, err := srv.WriteToUDPAddrPort([]byte("queued junk"), la); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	n := 0
	for n < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		n += Drain(a)
	}
	if n != 3 {
		t.Fatalf("drained %d, want 3", n)
	}
	if _, err := srv.WriteToUDPAddrPort([]byte("answer"), la); err != nil {
		t.Fatal(err)
	}
	a.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	if m, err := a.Read(buf); err != nil || string(buf[:m]) != "answer" {
		t.Fatalf("read %q, %v after the drain", buf[:m], err)
	}
}

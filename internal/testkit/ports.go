package testkit

import (
	"net"
	"strconv"
	"testing"
)

// FreeUDPPort returns a UDP port of 127.0.0.1 that was free a moment ago.
func FreeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free UDP port: %v", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// FreeTCPPort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreeTCPPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free TCP port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreeUDPAddr returns "127.0.0.1:PORT" with a UDP port that was free a
// moment ago.
func FreeUDPAddr(t testing.TB) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(FreeUDPPort(t))
}

// FreeTCPAddr returns "127.0.0.1:PORT" with a TCP port that was free a
// moment ago.
func FreeTCPAddr(t testing.TB) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(FreeTCPPort(t))
}

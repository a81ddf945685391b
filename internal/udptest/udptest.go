// Package udptest runs scripted UDP servers on loopback for tests: a
// malicious or confused game server that a query client must survive, or
// a fake master or game server.
package udptest

import (
	"errors"
	"net"
	"testing"
)

// Serve serves on a fresh 127.0.0.1 UDP socket until the test ends: serve
// gets a copy of each request and a function sending a datagram back to
// its source (false once the socket is closed). It returns the address.
func Serve(t testing.TB, serve func(req []byte, send func([]byte) bool)) string {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { conn.Close(); <-done })
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			n, src, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			serve(append([]byte{}, buf[:n]...), func(d []byte) bool {
				_, err := conn.WriteToUDPAddrPort(d, src)
				return err == nil || !errors.Is(err, net.ErrClosed)
			})
		}
	}()
	return conn.LocalAddr().String()
}

// Answer serves like Serve, sending back to each request the datagrams
// answer returns.
func Answer(t testing.TB, answer func(req []byte) [][]byte) string {
	t.Helper()
	return Serve(t, func(req []byte, send func([]byte) bool) {
		for _, d := range answer(req) {
			send(d)
		}
	})
}

package main

import (
	"log/slog"
	"net"
	"net/netip"
	"testing"

	"github.com/queryd/queryd/responder"
)

// consecutivePorts finds two free consecutive UDP ports on 127.0.0.1.
func consecutivePorts(t *testing.T) netip.AddrPort {
	t.Helper()
	for range 50 {
		a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		p := a.LocalAddr().(*net.UDPAddr).Port
		b, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p + 1})
		a.Close()
		if err == nil {
			b.Close()
			return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(p))
		}
	}
	t.Fatal("no two consecutive free UDP ports on 127.0.0.1")
	return netip.AddrPort{}
}

// TestLoadSpreadsOverPorts: with -ports 2, the two sources load two servers
// on consecutive ports, one each: the fixed servers answer 100 and 300 bytes,
// so the mean datagram is neither (bench/hosts.sh loads 50 servers so).
func TestLoadSpreadsOverPorts(t *testing.T) {
	base := consecutivePorts(t)
	for i, size := range []int{100, 300} {
		addr := netip.AddrPortFrom(base.Addr(), base.Port()+uint16(i))
		srv, err := responder.NewSockets(responder.SocketConfig{Listen: []netip.AddrPort{addr}, Logger: slog.New(slog.DiscardHandler)}, newFixedHandler(size, 1))
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Listen(); err != nil {
			t.Fatal(err)
		}
		srv.Start()
		t.Cleanup(func() { srv.Close() })
	}
	f := load(t, "-target", base.String(), "-ports", "2", "-proto", "a2s_info", "-sources", "2", "-inflight", "4", "-count", "400", "-duration", "3s")
	mean := num(t, f, "bytes_in") / num(t, f, "dgrams_in")
	if num(t, f, "answered") < 400 || mean <= 110 || mean >= 290 {
		t.Fatalf("want answers from both servers (mean datagram between 100 and 300 bytes, not at either): mean %.1f, %v", mean, f)
	}
	var out, errb nopWriter
	if rc := run([]string{"load", "-target", "127.0.0.1:65535", "-ports", "2"}, &out, &errb); rc != 2 {
		t.Errorf("-ports past port 65535: exit %d, want 2", rc)
	}
}

// nopWriter discards.
type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

//go:build linux

package netnstest

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/queryd/queryd/xdp"
)

// TestNet: a datagram from the client's namespace reaches a socket in the
// server's namespace and the answer comes back; a process started after
// Enter runs in the namespace; the namespaces are gone after cleanup.
func TestNet(t *testing.T) {
	var n *Net
	t.Run("net", func(t *testing.T) {
		n = New(t)
		var srv *net.UDPConn
		err := Do(n.ServerNS, func() (err error) {
			srv, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ServerAddr4, 0)))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		go func() {
			buf := make([]byte, 64)
			k, from, err := srv.ReadFromUDPAddrPort(buf)
			if err == nil {
				srv.WriteToUDPAddrPort(append([]byte("re:"), buf[:k]...), from)
			}
		}()
		leave := Enter(t, n.ClientNS)
		defer leave()
		CheckExec(t, n.ClientNS)
		c, err := net.DialUDP("udp", nil, srv.LocalAddr().(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("ping"))
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 64)
		k, err := c.Read(buf)
		if err != nil || !bytes.Equal(buf[:k], []byte("re:ping")) {
			t.Fatalf("answer %q, %v", buf[:k], err)
		}
	})
	if n == nil || t.Skipped() {
		return
	}
	for _, ns := range []string{n.ServerNS, n.ClientNS} {
		if _, err := os.Stat("/run/netns/" + ns); err == nil {
			t.Errorf("namespace %s still there after the test", ns)
		}
	}
}

// TestContains: the test network's ranges, and nothing else.
func TestContains(t *testing.T) {
	for a, want := range map[string]bool{
		"198.18.0.1": true, "198.19.255.255": true, "198.18.1.7": true, "fd00:5164:7864::1": true,
		"::ffff:198.18.0.2": true, "198.20.0.1": false, "127.0.0.1": false, "8.8.8.8": false, "fd00:5164:7865::1": false, "::1": false,
	} {
		if got := Contains(netip.MustParseAddr(a)); got != want {
			t.Errorf("Contains(%s) = %v, want %v", a, got, want)
		}
	}
}

// TestDriverStats: the veth's driver statistics are read by name (its
// peer_ifindex is the client end's index), and XDPTxErrors counts the
// frames an XDP_TX program on the server's end sends while the client's
// end cannot take them (its pass program detached): 20 datagrams, 20
// errors; with the pass program there, none.
func TestDriverStats(t *testing.T) {
	n := New(t)
	st, err := DriverStats(n.ServerNS, n.ServerIf)
	if err != nil {
		t.Fatal(err)
	}
	var peer int
	err = Do(n.ClientNS, func() error {
		ifc, err := net.InterfaceByName(n.ClientIf)
		if err == nil {
			peer = ifc.Index
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if st["peer_ifindex"] != uint64(peer) {
		t.Errorf("peer_ifindex = %d, want the client end's index %d (of %d statistics)", st["peer_ifindex"], peer, len(st))
	}
	var echo *xdp.Echo
	if err := Do(n.ServerNS, func() (err error) { echo, err = xdp.AttachEcho(n.ServerIf, false); return err }); err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	send := func(k int) uint64 {
		t.Helper()
		before, err := n.XDPTxErrors()
		if err != nil {
			t.Fatal(err)
		}
		err = Do(n.ClientNS, func() error {
			c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(ServerAddr4, 27015)))
			if err != nil {
				return err
			}
			defer c.Close()
			for range k {
				if _, err := c.Write([]byte("echo")); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		after, err := n.XDPTxErrors()
		if err != nil {
			t.Fatal(err)
		}
		return after - before
	}
	if got := send(20); got != 0 {
		t.Errorf("%d XDP_TX errors with the client's pass program attached, want 0", got)
	}
	if err := n.pass.Close(); err != nil {
		t.Fatal(err)
	}
	n.pass = nil
	if got := send(20); got != 20 {
		t.Errorf("%d XDP_TX errors for 20 echoes the client's end cannot take, want 20", got)
	}
}

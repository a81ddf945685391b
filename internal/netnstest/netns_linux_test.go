//go:build linux

package netnstest

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"
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

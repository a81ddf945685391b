package interop

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/internal/netnstest"
)

// divertHostServerFile is a host-mode server file diverting the stand-in
// at game, its state polled from it ([upstream] a2s), fed nothing else.
func divertHostServerFile(game netip.AddrPort, socket string) string {
	return fmt.Sprintf(`[listen]
divert = [%q]
workers = 1
[feed]
socket = %q
stale_after = %q
[upstream]
protocol = "a2s"
address = %q
interval = "1s"
timeout = "800ms"
[a2s]
enabled = true
`, game.String(), socket, divertStaleAfter.String(), game.String())
}

// divertAsk asks game A2S_INFO from the client namespace until it answers
// with want (or the deadline), and returns the last name it got.
func divertAsk(t *testing.T, n *netnstest.Net, game netip.AddrPort, want string, limit time.Duration) string {
	t.Helper()
	var got string
	err := netnstest.Do(n.ClientNS, func() error {
		c, err := a2s.Dial(game.String())
		if err != nil {
			return err
		}
		defer c.Close()
		for deadline := time.Now().Add(limit); ; time.Sleep(200 * time.Millisecond) {
			info, err := c.Info()
			if err == nil {
				got = info.Name
			}
			if got == want || time.Now().After(deadline) {
				return nil
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// divertGameEcho sends a game datagram to game from the client namespace
// and checks the stand-in's echo: it saw the client's own address and port.
func divertGameEcho(t *testing.T, n *netnstest.Net, game netip.AddrPort) {
	t.Helper()
	err := netnstest.Do(n.ClientNS, func() error {
		c, err := net.DialUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netnstest.ClientAddr4, 0)), net.UDPAddrFromAddrPort(game))
		if err != nil {
			return err
		}
		defer c.Close()
		me := c.LocalAddr().(*net.UDPAddr).AddrPort()
		p := []byte("game packet \x01\x02")
		c.Write(p)
		buf := make([]byte, 2048)
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		m, err := c.Read(buf)
		if err != nil {
			return fmt.Errorf("%s: no answer from the game server: %w", game, err)
		}
		if want := append([]byte("ECHO "+me.String()+" "), p...); !bytes.Equal(buf[:m], want) {
			return fmt.Errorf("%s: got %q, want %q (the game server sees the client's own address)", game, buf[:m], want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDivertHost (issues 26 and 27): one queryd in host mode runs a plain
// server (the main file's, its own port) and two server files, each
// diverting its own stand-in stock server's port on the namespace's
// address, with one XDP program. From the client's namespace each
// diverted port answers A2S_INFO with its own stand-in's name (polled by
// that server's [upstream]), no client query reaches either stand-in, a
// game datagram reaches each from the client's own address, and each
// server's divert counters (server="NAME") grow by its own queries.
// Removing one server file and sending SIGHUP stops that server's divert:
// its port's queries then reach its stand-in untouched (answered by it,
// from the client's address), while the other's stay diverted.
func TestDivertHost(t *testing.T) {
	n := netnstest.New(t)
	games := map[string]netip.AddrPort{
		"alpha": netip.AddrPortFrom(netnstest.ServerAddr4, 27215),
		"beta":  netip.AddrPortFrom(netnstest.ServerAddr4, 27216),
	}
	stands := map[string]*standIn{}
	for name, game := range games {
		stands[name] = startStandInNamed(t, n.ServerNS, game, "stand-in "+name)
	}
	d, dir := startXDPHost(t, n)
	files := map[string]string{}
	for name, game := range games {
		files[name] = filepath.Join(dir, "servers.d", name+".toml")
		if err := os.WriteFile(files[name], []byte(divertHostServerFile(game, filepath.Join(dir, name+".sock"))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d.Signal(t, syscall.SIGHUP)
	for name := range games {
		waitHealthy(t, d, "/healthz/"+name, 15*time.Second)
	}
	diverted := func(name, result string) float64 {
		return d.Metric(t, fmt.Sprintf(`queryd_xdp_diverted_total{result=%q,server=%q}`, result, name))
	}
	for _, name := range []string{"alpha", "beta"} {
		game := games[name]
		want := "stand-in " + name
		if got := divertAsk(t, n, game, want, 15*time.Second); got != want {
			t.Fatalf("%s answers A2S_INFO with %q, want %q (its own stand-in's state)", game, got, want)
		}
		divertGameEcho(t, n, game)
	}
	for name, s := range stands {
		if got := s.from(&s.queries, netnstest.ClientAddr4); got != 0 {
			t.Errorf("stand-in %s received %d queries from the client: divert let them through", name, got)
		}
		if got := s.from(&s.queries, netnstest.ServerAddr4); got == 0 {
			t.Errorf("stand-in %s received no poll from its server's [upstream]", name)
		}
		if got := s.from(&s.others, netnstest.ClientAddr4); got != 1 {
			t.Errorf("stand-in %s got %d game datagrams from the client, want 1", name, got)
		}
		if q, p := diverted(name, "xdp")+diverted(name, "socket"), diverted(name, "passed"); q == 0 || p != 1 {
			t.Errorf("server %s: diverted xdp+socket %v, passed %v: want its queries taken and its one game datagram passed", name, q, p)
		}
	}

	// beta's file removed: its divert stops, its port is the stand-in's.
	if err := os.Remove(files["beta"]); err != nil {
		t.Fatal(err)
	}
	d.Signal(t, syscall.SIGHUP)
	beta, alpha := stands["beta"], stands["alpha"]
	for deadline := time.Now().Add(15 * time.Second); beta.from(&beta.queries, netnstest.ClientAddr4) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("after beta's file was removed and SIGHUP, no client query reached its stand-in: still diverted")
		}
		divertAsk(t, n, games["beta"], "stand-in beta", time.Second)
	}
	if got := divertAsk(t, n, games["beta"], "stand-in beta", 5*time.Second); got != "stand-in beta" {
		t.Errorf("beta's port answers %q after its removal, want its stand-in's %q", got, "stand-in beta")
	}
	divertGameEcho(t, n, games["beta"])
	if got := divertAsk(t, n, games["alpha"], "stand-in alpha", 5*time.Second); got != "stand-in alpha" {
		t.Errorf("alpha's port answers %q after beta's removal, want %q", got, "stand-in alpha")
	}
	if got := alpha.from(&alpha.queries, netnstest.ClientAddr4); got != 0 {
		t.Errorf("after beta's removal, stand-in alpha received %d queries from the client: alpha's divert stopped too", got)
	}
}

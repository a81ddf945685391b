package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	rfa2s "github.com/rumblefrog/go-a2s"

	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/netnstest"
)

// TestXDPHost: one queryd in a network namespace runs three servers (the
// main file's and two server files added by a real SIGHUP) on three ports
// of the namespace's address, with one XDP program on its interface; a
// real A2S client outside asks each port and reads that server's own fed
// name, and the program answered each server's queries itself (its
// queryd_xdp_requests_total{server=NAME} answered and challenged grow:
// the token it checked is the one it issued for that client).
func TestXDPHost(t *testing.T) {
	n := netnstest.New(t)
	d, dir := startXDPHost(t, n)
	addrs := map[string]string{"main": xdpUDP.String()}
	socks := map[string]string{"main": d.Socket}
	for i, name := range []string{"second", "third"} {
		addrs[name] = fmt.Sprintf("%s:%d", netnstest.ServerAddr4, int(xdpUDP.Port())+1+i)
		socks[name] = filepath.Join(dir, name+".sock")
		if err := os.WriteFile(filepath.Join(dir, "servers.d", name+".toml"), []byte(hostServerFile(addrs[name], socks[name])), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d.Signal(t, syscall.SIGHUP)
	for _, name := range []string{"second", "third"} {
		waitHealthy(t, d, "/healthz/"+name, 10*time.Second)
	}
	for name, sock := range socks {
		c, err := feed.Dial(sock)
		if err != nil {
			t.Fatalf("%s's feed: %v", name, err)
		}
		if _, err := c.Replace(map[string]any{"name": "xdp host " + name, "map": "map_" + name, "max_players": 8}); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	for name, addr := range addrs {
		t.Run(name, func(t *testing.T) {
			metric := func(outcome string) float64 {
				return d.Metric(t, fmt.Sprintf(`queryd_xdp_requests_total{outcome=%q,protocol="a2s",server=%q}`, outcome, name))
			}
			answered, challenged := metric("answered"), metric("challenged")
			want := "xdp host " + name
			var got string
			for deadline := time.Now().Add(10 * time.Second); got != want && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				got = a2sName(t, n, addr)
			}
			if got != want {
				t.Fatalf("%s answers A2S_INFO with %q, want %q", addr, got, want)
			}
			for i := 0; i < 5; i++ {
				if got := a2sName(t, n, addr); got != want {
					t.Errorf("query %d: %q", i, got)
				}
			}
			if a, c := metric("answered")-answered, metric("challenged")-challenged; a < 5 || c < 5 {
				t.Errorf("the program answered %v and challenged %v of %s's queries, want 5 or more each", a, c, name)
			}
		})
	}
}

// a2sName asks addr A2S_INFO with a real client from the client
// namespace ("" when it is not answered).
func a2sName(t *testing.T, n *netnstest.Net, addr string) string {
	t.Helper()
	var c *rfa2s.Client
	err := netnstest.Do(n.ClientNS, func() (err error) {
		c, err = rfa2s.NewClient(addr, rfa2s.TimeoutOption(2*time.Second))
		return err
	})
	if err != nil {
		t.Fatalf("go-a2s client: %v", err)
	}
	defer c.Close()
	info, err := c.QueryInfo()
	if err != nil {
		return ""
	}
	return info.Name
}

// startXDPHost starts a queryd in n's server namespace answering A2S on
// xdpUDP, with the XDP program on its interface and [servers] including
// servers.d/*.toml beside its config (made empty); it returns the daemon
// and the config's folder.
func startXDPHost(t *testing.T, n *netnstest.Net) (*Daemon, string) {
	t.Helper()
	d := StartDaemon(t, Options{
		Netns:     n.ServerNS,
		UDPAddr:   xdpUDP.String(),
		Protocols: map[string]map[string]any{"a2s": nil},
		Tables: map[string]map[string]any{
			"xdp":     {"interfaces": []string{n.ServerIf}, "mode": "native"},
			"servers": {"include": []string{"servers.d/*.toml"}},
		},
	})
	dir := filepath.Dir(d.ConfigPath)
	if err := os.Mkdir(filepath.Join(dir, "servers.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	return d, dir
}

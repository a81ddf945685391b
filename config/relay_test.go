package config

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/relay"
)

// withLocalAddrs makes the host's interface addresses addrs for one test.
func withLocalAddrs(t *testing.T, addrs ...string) {
	t.Helper()
	old := localAddrs
	t.Cleanup(func() { localAddrs = old })
	localAddrs = func() []netip.Addr {
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out
	}
}

func relayConfig(listen []string, upstream string) string {
	return fmt.Sprintf("[listen]\nudp = [%s]\n[relay]\nupstream = %q\n", `"`+strings.Join(listen, `", "`)+`"`, upstream)
}

// A relay whose upstream is one of queryd's own listen addresses (or, with a
// wildcard listen address, an address of this host at the same port) would
// relay every datagram back to itself: Parse refuses it with its key.
func TestRelaySelfLoop(t *testing.T) {
	withLocalAddrs(t, "127.0.0.1", "::1", "192.0.2.7", "2001:db8::7", "fe80::7")
	cases := []struct {
		listen   []string
		upstream string
		loop     bool
	}{
		{[]string{"127.0.0.1:27015"}, "127.0.0.1:27015", true},
		{[]string{"127.0.0.1:27015"}, "127.0.0.1:27016", false},
		{[]string{"127.0.0.1:27015"}, "127.0.0.2:27015", false}, // nothing of ours listens there
		{[]string{"192.0.2.7:27960", "127.0.0.1:27015"}, "127.0.0.1:27015", true},
		{[]string{"[::1]:27015"}, "[::1]:27015", true},
		{[]string{"[::ffff:127.0.0.1]:27015"}, "127.0.0.1:27015", true},
		{[]string{"127.0.0.1:27015"}, "[::ffff:127.0.0.1]:27015", true},
		{[]string{"0.0.0.0:27015"}, "127.0.0.1:27015", true},
		{[]string{"0.0.0.0:27015"}, "127.3.2.1:27015", true}, // all of 127/8 is this host
		{[]string{"0.0.0.0:27015"}, "192.0.2.7:27015", true}, // an interface's address
		{[]string{"0.0.0.0:27015"}, "192.0.2.8:27015", false},
		{[]string{"0.0.0.0:27015"}, "127.0.0.1:27961", false}, // the usual setup
		{[]string{"0.0.0.0:27015"}, "[::1]:27015", false},     // an IPv4 socket does not get IPv6
		{[]string{"[::]:27015"}, "[::1]:27015", true},
		{[]string{"[::]:27015"}, "[2001:db8::7]:27015", true},
		{[]string{"[::]:27015"}, "[fe80::7%eth0]:27015", true},
		{[]string{"[::]:27015"}, "[2001:db8::8]:27015", false},
		{[]string{"[::]:27015"}, "127.0.0.1:27015", false}, // queryd's IPv6 sockets are IPv6-only
		{[]string{"0.0.0.0:27015", "[::]:27015"}, "[::1]:27015", true},
		{[]string{"127.0.0.1:27015"}, "0.0.0.0:27961", true}, // the unspecified address: this host
		{[]string{"127.0.0.1:27015"}, "[::]:27961", true},
	}
	for _, c := range cases {
		_, err := Parse([]byte(relayConfig(c.listen, c.upstream)))
		var errs Errors
		errors.As(err, &errs)
		got := len(errs) == 1 && errs[0].Key == "relay.upstream"
		if got != c.loop || (err != nil && !got) {
			t.Errorf("listen %v, upstream %s: %v; want a relay.upstream error: %v", c.listen, c.upstream, err, c.loop)
		}
	}
}

// The loop error says what is wrong and what to do.
func TestRelaySelfLoopMessage(t *testing.T) {
	withLocalAddrs(t)
	_, err := Parse([]byte(relayConfig([]string{"0.0.0.0:27015"}, "127.0.0.1:27015")))
	for _, want := range []string{"relay.upstream: 127.0.0.1:27015", "every address at port 27015", "loop", "game server"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

// A name is resolved by RelayGameServer (queryd check and start), which
// refuses one resolving to a loop and returns the address to use otherwise.
func TestRelayGameServerName(t *testing.T) {
	withLocalAddrs(t)
	c, err := Parse([]byte(relayConfig([]string{"127.0.0.1:27015"}, "localhost:27015")))
	if err != nil {
		t.Fatalf("a name is not resolved by Parse: %v", err)
	}
	_, err = c.RelayGameServer(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.Key != "relay.upstream" || !strings.Contains(e.Reason, "localhost resolves to") {
		t.Errorf("localhost:27015 with queryd on 127.0.0.1:27015: %v; want a relay.upstream error saying what it resolves to", err)
	}
	c.Relay.GameServer = "localhost:27961"
	if up, err := c.RelayGameServer(context.Background()); err != nil || !up.Addr().IsLoopback() || up.Port() != 27961 {
		t.Errorf("localhost:27961: %v, %v", up, err)
	}
	c.Relay.GameServer = "127.0.0.1:27961"
	if up, err := c.RelayGameServer(context.Background()); err != nil || up != netip.MustParseAddrPort("127.0.0.1:27961") {
		t.Errorf("127.0.0.1:27961: %v, %v", up, err)
	}
	c.Relay.GameServer = "no-such-host.invalid:27961"
	if _, err := c.RelayGameServer(context.Background()); err == nil || errors.As(err, &e) {
		t.Errorf("an unresolvable name: %v; want a lookup error (not a config error)", err)
	}
}

func TestRelayQueueWarning(t *testing.T) {
	c, err := Parse([]byte("[relay]\nqueue = 64\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(c.Warnings(), "\n"); !strings.Contains(w, "relay.queue: no longer used") {
		t.Errorf("warnings %q", w)
	}
}

func TestRelayDefaults(t *testing.T) {
	c, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Relay
	if r.GameServer != "" || r.Idle() != 2*time.Minute || r.Sessions() != 4096 || r.MaxSessionsPerIP != 16 || r.OpenRate != 2 || r.OpenBurst != 16 {
		t.Errorf("relay defaults %+v", r)
	}
	c, err = Parse([]byte("[relay]\nupstream = \"127.0.0.1:27961\"\nidle_timeout = \"30s\"\nmax_sessions = 100\nmax_sessions_per_ip = 4\nopen_rate = 0.5\nopen_burst = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	r = c.Relay
	if r.GameServer != "127.0.0.1:27961" || r.Idle() != 30*time.Second || r.Sessions() != 100 || r.MaxSessionsPerIP != 4 || r.OpenRate != 0.5 || r.OpenBurst != 2 {
		t.Errorf("relay %+v", r)
	}
}

func TestRelayErrors(t *testing.T) {
	cases := []struct{ cfg, key, reason string }{
		{"[relay]\nupstream = \"27961\"", "relay.upstream", "HOST:PORT"},
		{"[relay]\nupstream = \"x:0\"", "relay.upstream", "port from 1 to 65535"},
		{"[relay]\nidle_timeout = \"10ms\"", "relay.idle_timeout", "1s to 1h"},
		{"[relay]\nidle_timeout = \"2h\"", "relay.idle_timeout", "1s to 1h"},
		{"[relay]\nmax_sessions_per_ip = 0", "relay.max_sessions_per_ip", "1 to 65536"},
		{"[relay]\nopen_rate = -1.0", "relay.open_rate", "want 0"},
		{"[relay]\nopen_burst = 0", "relay.open_burst", "1 to 65536"},
		{"[relay]\nmax_sessions = -1", "relay.max_sessions", "1 to 65536"},
		{"[relay]\nmax_sessions = 65537", "relay.max_sessions", "1 to 65536"},
		{"[relay]\nbogus = 1", "relay.bogus", "unknown key"},
		{"[relay]\nshare_ipv4_24 = 1.5", "relay.share_ipv4_24", "0 (no cap) to 1"},
		{"[relay]\nshare_ipv6_56 = -0.1", "relay.share_ipv6_56", "0 (no cap) to 1"},
		{"[relay]\nshare_ipv6_48 = nan", "relay.share_ipv6_48", "0 (no cap) to 1"},
		{"[relay]\nproven_reserve = 0.95", "relay.proven_reserve", "0 to 0.9"},
		{"[relay]\nprove_after = \"2m\"", "relay.prove_after", "0s to 1m"},
		{"[relay]\nloading_grace = \"2h\"", "relay.loading_grace", "0s to 1h"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.cfg))
		var errs Errors
		if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Key != c.key || !strings.Contains(errs[0].Reason, c.reason) {
			t.Errorf("%q: %v; want one error %s containing %q", c.cfg, err, c.key, c.reason)
		}
	}
}

// open_rate = 0 means no limit, in the file and in the relay.Config made
// from it (before, the config's 0 was the relay's "default: 2 a second",
// bridged by a conversion in the daemon).
func TestRelayOpenRateZeroIsNoLimit(t *testing.T) {
	c, err := Parse([]byte("[relay]\nupstream = \"127.0.0.1:27961\"\nopen_rate = 0\nopen_burst = 1\nmax_sessions_per_ip = 64\n"))
	if err != nil {
		t.Fatal(err)
	}
	rc := c.Relay.RelayConfig(netip.MustParseAddrPort("127.0.0.1:27961"))
	if rc.OpenRate != 0 {
		t.Fatalf("relay.Config.OpenRate = %v; want 0", rc.OpenRate)
	}
	r, err := relay.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for port := 1; port <= 32; port++ {
		r.Forward([]byte("x"), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(50000+port)), netip.Addr{}, nopSend{})
	}
	if n := r.Sessions(); n != 32 {
		t.Errorf("open_rate = 0 with a burst of 1: one source opened %d sessions of 32; want all (no limit)", n)
	}
	d := defaultRelay().RelayConfig(netip.MustParseAddrPort("127.0.0.1:27961"))
	if d.OpenRate != relay.DefaultOpenRate || d.Reserve != relay.DefaultReserve || d.LoadingGrace != relay.DefaultLoadingGrace {
		t.Errorf("the defaults' relay.Config %+v", d)
	}
}

type nopSend struct{}

func (nopSend) SendFrom([]byte, netip.Addr, netip.AddrPort) error { return nil }

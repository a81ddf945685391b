package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestQuake3Defaults(t *testing.T) {
	c, err := Parse([]byte(""))
	if err != nil {
		t.Fatal(err)
	}
	q := c.Quake3
	if !q.Enabled || q.Protocol != 68 || q.PacketRate != 1 || q.PacketBurst != 10 || q.QueryPortIsJoinPort || len(q.Masters) != 0 {
		t.Errorf("defaults %+v", q)
	}
	r := c.Relay
	if r.Upstream != "" || r.Idle() != 2*time.Minute || r.Sessions() != 4096 || r.MaxSessionsPerIP != 16 || r.OpenRate != 2 || r.OpenBurst != 16 {
		t.Errorf("relay defaults %+v", r)
	}
}

func TestQuake3Valid(t *testing.T) {
	c, err := Parse([]byte(`
[quake3]
gamename = "et"
protocol = 84
gametype = 4
packet_rate = 2.5
packet_burst = 20
[quake3.info]
sv_punkbuster = "0"
pure = "1"
[[quake3.masters]]
address = "etmaster.example.org:27950"
heartbeat = "EnemyTerritory-1"
flatline = "ETFlatline-1"
[[quake3.masters]]
address = "[::1]:27950"
heartbeat = "DarkPlaces"
[relay]
upstream = "127.0.0.1:27961"
idle_timeout = "30s"
queue = 16
max_sessions = 100
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Quake3.Masters) != 2 || c.Quake3.Masters[0].Flatline != "ETFlatline-1" || c.Relay.Idle() != 30*time.Second {
		t.Errorf("%+v %+v", c.Quake3, c.Relay)
	}
	if kv := c.Quake3.InfoKeys(); len(kv) != 2 || kv[0] != [2]string{"pure", "1"} {
		t.Errorf("info keys %v", kv)
	}
	// The operator's switch instead of relay mode.
	if _, err := Parse([]byte("[quake3]\nquery_port_is_join_port = true\n[[quake3.masters]]\naddress = \"m.example.org:27950\"\nheartbeat = \"DarkPlaces\"\n")); err != nil {
		t.Errorf("switch: %v", err)
	}
}

func TestQuake3Errors(t *testing.T) {
	cases := []struct{ cfg, key, reason string }{
		{"[[quake3.masters]]\naddress = \"m.example.org:27950\"\nheartbeat = \"DarkPlaces\"", "quake3.masters", "relay mode"},
		{"[quake3]\nenabled = false\nquery_port_is_join_port = true\n[[quake3.masters]]\naddress = \"m.example.org:27950\"\nheartbeat = \"DarkPlaces\"", "quake3.enabled", "nothing answers"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"nohost\"\nheartbeat = \"DarkPlaces\"", "quake3.masters[0].address", "HOST:PORT"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"m:0\"\nheartbeat = \"DarkPlaces\"", "quake3.masters[0].address", "port"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"Dark Places\"", "quake3.masters[0].heartbeat", "without spaces"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"\"", "quake3.masters[0].heartbeat", "1 to 64"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"A\"\nflatline = \"a;b\"", "quake3.masters[0].flatline", "printable"},
		{"[quake3]\ngamename = \"my game\"", "quake3.gamename", "spaces"},
		{"[quake3]\nprotocol = 0", "quake3.protocol", "want 1"},
		{"[quake3]\ngametype = -1", "quake3.gametype", "want 0"},
		{"[quake3]\npacket_rate = -1.0", "quake3.packet_rate", "want 0"},
		{"[quake3]\npacket_burst = 0", "quake3.packet_burst", "want 1"},
		{"[quake3.info]\nhostname = \"x\"", "quake3.info.hostname", "sets"},
		{"[quake3.info]\n\"a b\" = \"x\"", "quake3.info.a b", "key"},
		{"[quake3.info]\nk = \"a\\\\b\"", "quake3.info.k", "without"},
		{"[relay]\nupstream = \"27961\"", "relay.upstream", "HOST:PORT"},
		{"[relay]\nidle_timeout = \"10ms\"", "relay.idle_timeout", "1s to 1h"},
		{"[relay]\nmax_sessions_per_ip = 0", "relay.max_sessions_per_ip", "1 to 65536"},
		{"[relay]\nopen_rate = -1.0", "relay.open_rate", "want 0"},
		{"[relay]\nopen_burst = 0", "relay.open_burst", "1 to 65536"},
		{"[relay]\nmax_sessions = -1", "relay.max_sessions", "1 to 65536"},
		{"[relay]\nbogus = 1", "relay.bogus", "unknown key"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.cfg))
		var errs Errors
		if !errors.As(err, &errs) {
			t.Errorf("%q: want Errors, got %v", c.cfg, err)
			continue
		}
		found := false
		for _, e := range errs {
			if e.Key == c.key && strings.Contains(e.Reason, c.reason) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: no error %s containing %q in\n%v", c.cfg, c.key, c.reason, errs)
		}
	}
}

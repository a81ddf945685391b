package quake3_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/quake3"
)

func parseQuake3(text string) (*config.Config, *quake3.Section, error) {
	c, err := config.Parse([]byte(text), quake3.Module{})
	if err != nil {
		return nil, nil, err
	}
	return c, c.Section("quake3").(*quake3.Section), nil
}

func TestSectionDefaults(t *testing.T) {
	_, q, err := parseQuake3("")
	if err != nil {
		t.Fatal(err)
	}
	if !q.Enabled || !q.On() || q.GameName != "" || q.Protocol != 68 || q.GameType != 0 || q.PacketRate != 1 || q.PacketBurst != 10 ||
		q.QueryPortIsJoinPort || len(q.Info) != 0 || len(q.Masters) != 0 {
		t.Errorf("defaults %+v", q)
	}
	if q.Protocol != quake3.DefaultProtocol || q.PacketRate != quake3.DefaultPacketRate || q.PacketBurst != quake3.DefaultPacketBurst {
		t.Errorf("defaults %+v, want the package's", q)
	}
	pl := quake3.Module{}.PassLimit(q)
	if pl.Rate != 5 || pl.Burst != 5 || pl.SourceRate != 0.1 || pl.SourceBurst != 4 || !pl.On() ||
		!pl.Match([]byte("\xFF\xFF\xFF\xFFgetchallenge")) || pl.Match([]byte("\xFF\xFF\xFF\xFFconnect")) {
		t.Errorf("pass limit %+v", pl)
	}
	// Below ioquake3's global bucket (10 at once, 10 a second): room is left for the poll.
	if quake3.DefaultPassRate >= 10 || quake3.DefaultPassBurst >= 10 {
		t.Errorf("the default pass limit %v/s, burst %d, does not leave room in ioquake3's bucket", quake3.DefaultPassRate, quake3.DefaultPassBurst)
	}
}

func TestSectionValid(t *testing.T) {
	c, q, err := parseQuake3(`
[quake3]
gamename = "et"
protocol = 84
gametype = 4
packet_rate = 2.5
packet_burst = 20
pass_rate = 0.0
pass_source_rate = 0.5
pass_source_burst = 2
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
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []quake3.Master{
		{Address: "etmaster.example.org:27950", Heartbeat: "EnemyTerritory-1", Flatline: "ETFlatline-1"},
		{Address: "[::1]:27950", Heartbeat: "DarkPlaces"},
	}
	if len(q.Masters) != 2 || q.Masters[0] != want[0] || q.Masters[1] != want[1] {
		t.Errorf("masters %+v", q.Masters)
	}
	if q.GameName != "et" || q.Protocol != 84 || q.GameType != 4 || q.PacketRate != 2.5 || q.PacketBurst != 20 ||
		q.PassRate != 0 || q.PassBurst != 5 || q.PassSourceRate != 0.5 || q.PassSourceBurst != 2 {
		t.Errorf("%+v", q)
	}
	if c.Relay.GameServer != "127.0.0.1:27961" || c.Relay.Sessions() != 100 {
		t.Errorf("relay %+v", c.Relay)
	}
	if kv := q.InfoKeys(); len(kv) != 2 || kv[0] != (quake3.KeyValue{Key: "pure", Value: "1"}) || kv[1] != (quake3.KeyValue{Key: "sv_punkbuster", Value: "0"}) {
		t.Errorf("info keys %v", kv)
	}
	// The operator's switch instead of relay mode.
	if _, _, err := parseQuake3("[quake3]\nquery_port_is_join_port = true\n[[quake3.masters]]\naddress = \"m.example.org:27950\"\nheartbeat = \"DarkPlaces\"\n"); err != nil {
		t.Errorf("switch: %v", err)
	}
	// Masters with [quake3] off but relay mode on: the game server answers
	// the masters' getinfo.
	if _, q, err := parseQuake3("[quake3]\nenabled = false\n[relay]\nupstream = \"127.0.0.1:27961\"\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"A\"\n"); err != nil || q.On() {
		t.Errorf("off with relay: %v", err)
	}
}

func TestSectionErrors(t *testing.T) {
	cases := []struct{ cfg, key, reason string }{
		{"[[quake3.masters]]\naddress = \"m.example.org:27950\"\nheartbeat = \"DarkPlaces\"", "quake3.masters", "relay mode"},
		{"[quake3]\nenabled = false\nquery_port_is_join_port = true\n[[quake3.masters]]\naddress = \"m.example.org:27950\"\nheartbeat = \"DarkPlaces\"", "quake3.enabled", "nothing answers"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"nohost\"\nheartbeat = \"DarkPlaces\"", "quake3.masters[0].address", "HOST:PORT"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"m:0\"\nheartbeat = \"DarkPlaces\"", "quake3.masters[0].address", "port"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"Dark Places\"", "quake3.masters[0].heartbeat", "without spaces"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"\"", "quake3.masters[0].heartbeat", "1 to 64"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"A\"\nflatline = \"a;b\"", "quake3.masters[0].flatline", "printable"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"A\"\n[[quake3.masters]]\naddress = \"m:2\"\nheartbeat = \"B\\\\\"", "quake3.masters[1].heartbeat", "printable"},
		{"[quake3]\ngamename = \"my game\"", "quake3.gamename", "spaces"},
		{"[quake3]\nprotocol = 0", "quake3.protocol", "want 1"},
		{"[quake3]\ngametype = -1", "quake3.gametype", "want 0"},
		{"[quake3]\npacket_rate = -1.0", "quake3.packet_rate", "want 0"},
		{"[quake3]\npass_rate = -1.0", "quake3.pass_rate", "want 0"},
		{"[quake3]\npass_rate = nan", "quake3.pass_rate", "want 0"},
		{"[quake3]\npass_source_rate = 1001.0", "quake3.pass_source_rate", "want 0"},
		{"[quake3]\npass_burst = 0", "quake3.pass_burst", "want 1"},
		{"[quake3]\npass_source_burst = 1001", "quake3.pass_source_burst", "want 1"},
		{"[quake3]\npacket_burst = 0", "quake3.packet_burst", "want 1"},
		{"[quake3.info]\nhostname = \"x\"", "quake3.info.hostname", "sets"},
		{"[quake3.info]\n\"a b\" = \"x\"", "quake3.info.a b", "key"},
		{"[quake3.info]\nk = \"a\\\\b\"", "quake3.info.k", "without"},
		{"[quake3]\nbogus = 1", "quake3.bogus", "unknown key"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"A\"\nfoo = 1", "quake3.masters[0].foo", "unknown key"},
		{"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = 27950\nheartbeat = \"A\"", "quake3.masters[0].address", "want a string, got an integer"},
		{"[quake3.info]\nk = 5", "quake3.info.k", "want a string, got an integer"},
		{"[quake3]\ninfo = 5", "quake3.info", "want a table, got an integer"},
		{"[quake3]\nmasters = 5", "quake3.masters", "want an array of tables, got an integer"},
	}
	for _, c := range cases {
		_, _, err := parseQuake3(c.cfg)
		var errs config.Errors
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

// The bounds: 16 masters and 32 info keys at most, values of 256 bytes.
func TestSectionLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("[relay]\nupstream = \"x:1\"\n")
	for range 17 {
		b.WriteString("[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"A\"\n")
	}
	b.WriteString("[quake3.info]\n")
	for i := range 33 {
		b.WriteString("k" + strings.Repeat("x", i) + " = \"v\"\n")
	}
	_, _, err := parseQuake3(b.String())
	want := "quake3.info: at most 32 keys, got 33 (line 54)\nquake3.masters: at most 16 masters, got 17 (line 3)"
	if err == nil || err.Error() != want {
		t.Errorf("%v; want\n%s", err, want)
	}
	_, _, err = parseQuake3("[quake3.info]\nk = \"" + strings.Repeat("v", 257) + "\"\n")
	if err == nil || !strings.HasPrefix(err.Error(), "quake3.info.k: want at most 256 bytes") {
		t.Errorf("a long value: %v", err)
	}
	if _, _, err := parseQuake3("[quake3.info]\nk = \"" + strings.Repeat("v", 256) + "\"\n"); err != nil {
		t.Errorf("a value of 256 bytes: %v", err)
	}
}

// [[quake3.masters]] take effect on restart; other keys do not need one.
func TestSectionRestartKeys(t *testing.T) {
	old, _, err := parseQuake3("[quake3]\nquery_port_is_join_port = true\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"A\"\n")
	if err != nil {
		t.Fatal(err)
	}
	same, _, err := parseQuake3("[quake3]\nquery_port_is_join_port = true\nprotocol = 71\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"A\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if k := same.RestartKeys(old); len(k) != 0 {
		t.Errorf("same masters: %q", k)
	}
	other, _, err := parseQuake3("[quake3]\nquery_port_is_join_port = true\n[[quake3.masters]]\naddress = \"m:2\"\nheartbeat = \"A\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if k := strings.Join(other.RestartKeys(old), " "); k != "quake3.masters" {
		t.Errorf("other masters: %q", k)
	}
}

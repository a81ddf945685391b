package config_test

import (
	"errors"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/protocols"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sagl"
)

// modules are the protocol modules, as queryd registers them.
var modules = protocols.ConfigModules()

// exampleModules are the modules and the sources' tables the daemon adds
// (daemon.ConfigModules: [agones], [sleep]), as queryd parses its files.
var exampleModules = daemon.ConfigModules(daemonModules())

// daemonModules returns the registration list as the daemon takes it.
func daemonModules() []daemon.Module {
	var out []daemon.Module
	for _, m := range protocols.List() {
		out = append(out, m)
	}
	return out
}

func parse(text string) (*config.Config, error) { return config.Parse([]byte(text), modules...) }

// checkSections fails unless c has every module's section, of its type
// (mods: the modules c was parsed with; none: modules).
func checkSections(t *testing.T, c *config.Config, mods ...config.Module) {
	t.Helper()
	if len(mods) == 0 {
		mods = modules
	}
	if len(c.Modules) != len(mods) {
		t.Fatalf("sections %+v, want one per module", c.Modules)
	}
	for i, m := range mods {
		s := c.Section(m.Name())
		if c.Modules[i].Name != m.Name() || s == nil || reflect.TypeOf(s) != reflect.TypeOf(m.NewSection()) {
			t.Fatalf("section %q: %#v", m.Name(), s)
		}
	}
}

// The embedded default config parses with every module, all of them on.
func TestDefaultConfigWithModules(t *testing.T) {
	c, err := config.Parse(config.Default, modules...)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, c)
	for _, s := range c.Modules {
		if !s.Section.On() {
			t.Errorf("[%s] off by default", s.Name)
		}
	}
	if a := c.Section("a2s").(*a2s.Section); a.AppID != 480 || a.Protocol != 17 || !a.InfoChallenge || !a.Compat || a.LegacyRequests {
		t.Errorf("[a2s] defaults %+v", a)
	}
	if c.ServerDoc["name"] != "queryd demo server" {
		t.Errorf("demo state: %v", c.ServerDoc)
	}
}

// queryd.toml.example parses with every module, without a warning.
func TestExampleConfigIsValid(t *testing.T) {
	b, err := os.ReadFile("../queryd.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse(b, exampleModules...)
	if err != nil {
		t.Fatalf("queryd.toml.example: %v", err)
	}
	checkSections(t, c, exampleModules...)
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("queryd.toml.example: warnings %q", w)
	}
	// Load reads it the same way.
	if _, err := config.Load("../queryd.toml.example", exampleModules...); err != nil {
		t.Fatalf("Load: %v", err)
	}
}

// Every module's table is checked in the same run as the core tables: an
// error in each is reported at once, each with its key.
func TestEveryErrorWithItsKeyWithModules(t *testing.T) {
	_, err := parse(`
[listen]
udp = ["0.0.0.0:27015", "nonsense", "0.0.0.0:27015"]
[feed]
mode = "0777x"
[a2s]
app_id = 70000
[gamespy4]
max_packet = 1
[sagl]
players = "all"
[quake3]
protocol = 0
[bedrock]
protocol = 0
[nosuch]
x = 1
`)
	var errs config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want Errors, got %T %v", err, err)
	}
	var keys []string
	for _, e := range errs {
		keys = append(keys, e.Key)
	}
	want := "a2s.app_id bedrock.protocol feed.mode gamespy4.max_packet listen.udp[1] listen.udp[2] nosuch quake3.protocol sagl.players"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("error keys\n got %q\nwant %q\n%v", got, want, err)
	}
}

// Warnings come from the core tables and from every module's section.
func TestWarningsWithModules(t *testing.T) {
	c, err := parse("[a2s]\napp_id = 0\n[admin]\nlisten = \"0.0.0.0:9273\"\n[relay]\nqueue = 64\n")
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(c.Warnings(), "\n")
	for _, key := range []string{"a2s.app_id: 0 has a low byte below 200", "admin.listen: 0.0.0.0:9273 is not a loopback", "relay.queue: no longer used"} {
		if !strings.Contains(w, key) {
			t.Errorf("warnings lack %q:\n%s", key, w)
		}
	}
	// [a2s] off: its app id does not matter.
	if c, err = parse("[a2s]\nenabled = false\napp_id = 0\n"); err != nil || len(c.Warnings()) != 0 {
		t.Errorf("a2s off: %v %q", err, c.Warnings())
	}
}

// RestartKeys names the keys whose change needs a restart, the modules'
// among them.
func TestRestartKeys(t *testing.T) {
	old, err := parse("")
	if err != nil {
		t.Fatal(err)
	}
	c, err := parse(`
[listen]
udp = ["127.0.0.1:27015"]
[log]
level = "debug"
[sagl]
http = "127.0.0.1:8080"
[quake3]
query_port_is_join_port = true
[[quake3.masters]]
address = "m.example.org:27950"
heartbeat = "DarkPlaces"
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.RestartKeys(old), " "); got != "listen log sagl.http quake3.masters" {
		t.Errorf("restart keys %q", got)
	}
	if got := old.RestartKeys(old); len(got) != 0 {
		t.Errorf("no change: restart keys %q", got)
	}
}

// FuzzParse: the config loader never panics with every module registered;
// every error names its key; what it accepts is valid, with typed values
// in their bounds; and the same text gives the same answer twice.
func FuzzParse(f *testing.F) {
	f.Add(config.Default)
	f.Add([]byte("[listen]\nudp = [\"127.0.0.1:1\"]\n[server]\nname = \"x\"\n"))
	f.Add([]byte("[limits]\nper_ip_rate = \"1KiB\"\n"))
	f.Add([]byte("[server.players.1]\nname = 3\n"))
	f.Add([]byte("[a2s]\napp_id = \"x\"\nfoo = 1\n[listen]\nworkers = \"two\"\n[server]\nnmae = \"x\"\nmax_players = \"lots\"\n"))
	f.Add([]byte("[feed]\nmode = \"0600\"\n[log]\nlevel = \"warn\"\nformat = \"json\"\n[admin]\nlisten = \"\"\n"))
	f.Add([]byte("[gamespy4]\nhostip = \"::1\"\n[sagl]\nhttp = \"[::1]:8080\"\nplayers = \"count\"\n"))
	f.Add([]byte("[relay]\nupstream = \"127.0.0.1:27961\"\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"A\"\nfoo = 1\n[quake3.info]\nk = \"v\"\n"))
	if b, err := os.ReadFile("../queryd.toml.example"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := config.Parse(data, modules...)
		_, err2 := config.Parse(data, modules...)
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("two answers: %v\nthen: %v", err, err2)
		}
		var errs config.Errors
		if errors.As(err, &errs) {
			for _, e := range errs {
				if e.Key == "" || e.Reason == "" {
					t.Fatalf("an error without its key or reason: %q", e)
				}
			}
		}
		if err != nil {
			return
		}
		checkValid(t, c)
	})
}

// checkValid fails unless the accepted config c holds valid values.
func checkValid(t *testing.T, c *config.Config) {
	t.Helper()
	if len(c.Listen.UDP) == 0 || c.Limits.PerIPBurst < 1500 || c.ServerDoc == nil {
		t.Fatalf("accepted an invalid config: %+v", c)
	}
	seen := map[netip.AddrPort]bool{}
	for _, ap := range c.Listen.UDP {
		if !ap.IsValid() || seen[ap] {
			t.Fatalf("listen.udp %v", c.Listen.UDP)
		}
		seen[ap] = true
	}
	if c.Feed.Mode&0o600 != 0o600 || c.Feed.Mode > 0o777 {
		t.Fatalf("feed.mode %o", c.Feed.Mode)
	}
	if l := c.Log.Level; l != -4 && l != 0 && l != 4 && l != 8 || c.Log.Format != config.LogText && c.Log.Format != config.LogJSON {
		t.Fatalf("log %+v", c.Log)
	}
	switch c.Listen.Socket {
	case responder.SocketAuto, responder.SocketBatch, responder.SocketPortable, responder.SocketUring:
	default:
		t.Fatalf("listen.socket %q", c.Listen.Socket)
	}
	checkSections(t, c)
	if a := c.Section("a2s").(*a2s.Section); a.AppID < 0 || a.AppID > 65535 || a.Protocol < 0 || a.Protocol > 255 {
		t.Fatalf("[a2s] %+v", a)
	}
	if g := c.Section("gamespy4").(*gamespy4.Section); g.MaxPacket < gamespy4.MinPacket || g.MaxPacket > gamespy4.MaxPacket || g.HostIP.Zone() != "" {
		t.Fatalf("[gamespy4] %+v", g)
	}
	if s := c.Section("sagl").(*sagl.Section); s.HTTPMaxConns < 1 || s.MaxLogo < 1024 || s.MaxList < 1024 {
		t.Fatalf("[sagl] %+v", s)
	}
	if q := c.Section("quake3").(*quake3.Section); q.Protocol < 1 || q.PacketBurst < 1 || len(q.Masters) > 16 {
		t.Fatalf("[quake3] %+v", q)
	}
	if b := c.Section("bedrock").(*bedrock.Section); b.Protocol < 1 || b.PacketBurst < 1 || b.Edition == "" || b.IPv4Port > 65535 {
		t.Fatalf("[bedrock] %+v", b)
	}
}

package config

import (
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/responder"
)

// errorKeys returns the keys of err's Errors, in order, or fails the test.
func errorKeys(t *testing.T, err error) []string {
	t.Helper()
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want Errors, got %T %v", err, err)
	}
	keys := make([]string, len(errs))
	for i, e := range errs {
		keys[i] = e.Key
	}
	return keys
}

// The core tables' defaults, with no module registered (stubs stand in
// for the tables the demo sets).
func TestDefaultConfig(t *testing.T) {
	c, err := Parse(Default, demoStubs(t)...)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Listen.UDP) != 1 || c.Listen.UDP[0] != netip.MustParseAddrPort("0.0.0.0:27015") {
		t.Fatalf("listen.udp %v", c.Listen.UDP)
	}
	if c.ServerDoc["name"] != "queryd demo server" {
		t.Fatalf("demo state: %v", c.ServerDoc)
	}
	if !c.Listen.GSO || c.Listen.Socket != responder.SocketAuto || c.Listen.RecvBuffer != 4<<20 {
		t.Fatalf("listen defaults: %+v", c.Listen)
	}
	if off, err := Parse([]byte("[listen]\ngso = false\n")); err != nil || off.Listen.GSO {
		t.Fatalf("gso = false: %v, %+v", err, off.Listen)
	}
	if time.Duration(c.Feed.StaleAfter) != 60*time.Second || c.Limits.PerIPRate != 256<<10 || c.Limits.PerIPBurst != 64<<10 {
		t.Fatalf("defaults: %+v %+v", c.Feed, c.Limits)
	}
	if c.Feed.Mode != 0o660 || c.Feed.MaxConns != 64 || c.Feed.MaxBuffered != 16<<20 || time.Duration(c.Feed.LineTimeout) != 10*time.Second {
		t.Fatalf("feed defaults: %+v", c.Feed)
	}
	if c.Admin.Listen != netip.MustParseAddrPort("127.0.0.1:9273") {
		t.Fatalf("admin.listen %v", c.Admin.Listen)
	}
	if c.Log.Level != slog.LevelInfo || c.Log.Format != LogText {
		t.Fatalf("log defaults: %+v", c.Log)
	}
	for _, m := range c.Modules {
		if _, stub := m.Section.(*stubSection); !stub {
			t.Fatalf("no module registered, got section %+v", m)
		}
	}
	// An empty file is the defaults, with an empty [server].
	e, err := Parse(nil)
	if err != nil || e.ServerDoc == nil || len(e.ServerDoc) != 0 {
		t.Fatalf("empty config: %v %v", err, e)
	}
}

// Every typed core value set from the file.
func TestCoreValues(t *testing.T) {
	c, err := Parse([]byte(`
[listen]
udp = ["127.0.0.1:27015", "[::1]:27015"]
socket = "portable"
workers = 4
recv_buffer = "8MiB"
[feed]
socket = "/run/queryd/feed.sock"
mode = "0600"
group = "games"
stale_after = "2m"
max_conns = 8
max_buffered = "2MiB"
line_timeout = "500ms"
[admin]
listen = "[::1]:9000"
[log]
level = "debug"
format = "json"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := AddrPorts{netip.MustParseAddrPort("127.0.0.1:27015"), netip.MustParseAddrPort("[::1]:27015")}
	if len(c.Listen.UDP) != 2 || c.Listen.UDP[0] != want[0] || c.Listen.UDP[1] != want[1] {
		t.Errorf("listen.udp %v", c.Listen.UDP)
	}
	if c.Listen.Socket != responder.SocketPortable || c.Listen.Workers != 4 || c.Listen.RecvBuffer != 8<<20 {
		t.Errorf("listen %+v", c.Listen)
	}
	f := c.Feed
	if f.Socket != "/run/queryd/feed.sock" || f.Mode != 0o600 || f.Group != "games" || time.Duration(f.StaleAfter) != 2*time.Minute ||
		f.MaxConns != 8 || f.MaxBuffered != 2<<20 || time.Duration(f.LineTimeout) != 500*time.Millisecond {
		t.Errorf("feed %+v", f)
	}
	if c.Admin.Listen != netip.MustParseAddrPort("[::1]:9000") {
		t.Errorf("admin.listen %v", c.Admin.Listen)
	}
	if c.Log.Level != slog.LevelDebug || c.Log.Format != LogJSON {
		t.Errorf("log %+v", c.Log)
	}
	// "" turns the admin listener off: the zero AddrPort.
	off, err := Parse([]byte("[admin]\nlisten = \"\"\n"))
	if err != nil || off.Admin.Listen.IsValid() {
		t.Errorf("admin.listen = \"\": %v %v", err, off)
	}
}

func TestEveryErrorWithItsKey(t *testing.T) {
	cfg := `
[listen]
udp = ["0.0.0.0:27015", "nonsense", "0.0.0.0:27015"]
bogus = 1
[feed]
socket = "relative.sock"
mode = "0777x"
stale_after = "soon"
max_conns = 0
max_buffered = "1KiB"
line_timeout = "0s"
[limits]
per_ip_rate = "12 parsecs"
[server]
name = 5
[admin]
listen = "everywhere"
[log]
level = "loud"
[nosuch]
x = 1
`
	// The values of the wrong type (stale_after, per_ip_rate) hide no
	// other error: every one is reported at once. An unknown table's keys
	// are listed too.
	want := []string{"admin.listen", "feed.line_timeout", "feed.max_buffered", "feed.max_conns", "feed.mode", "feed.socket",
		"feed.stale_after", "limits.per_ip_rate", "listen.bogus", "listen.udp[1]", "listen.udp[2]", "log.level", "nosuch", "server.name"}
	_, err := Parse([]byte(cfg))
	if got := errorKeys(t, err); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("error keys\n got %q\nwant %q\n%v", got, want, err)
	}
}

func TestDecodeErrorsNameTheKey(t *testing.T) {
	for cfg, key := range map[string]string{
		"[feed]\nstale_after = \"soon\"\n":         "feed.stale_after",
		"[limits]\nper_ip_rate = \"12 parsecs\"\n": "limits.per_ip_rate",
		"[listen]\nudp = \"0.0.0.0:1\"\n":          "listen.udp",
		"[listen]\ngso = 1\n":                      "listen.gso",
	} {
		_, err := Parse([]byte(cfg))
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: %v, want the key %s", cfg, err, key)
		}
	}
	if _, err := Parse([]byte("[listen\n")); err == nil || !strings.Contains(err.Error(), "TOML syntax: line") {
		t.Errorf("syntax error: %v", err)
	}
}

func TestServerPlayersFromTOML(t *testing.T) {
	c, err := Parse([]byte(`
[server]
name = "x"
max_players = 4
[server.players.3]
name = "Sam"
score = -2
time = 1.5
[server.rules]
a = 1
`))
	if err != nil {
		t.Fatal(err)
	}
	p := c.ServerDoc["players"].(map[string]any)["3"].(map[string]any)
	if p["name"] != "Sam" {
		t.Fatalf("%v", p)
	}
	_, err = Parse([]byte("[server.players.x]\nname = \"a\"\n"))
	if err == nil || !strings.Contains(err.Error(), "server.players.x") {
		t.Fatalf("bad player id: %v", err)
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{"256KiB": 256 << 10, "1MiB": 1 << 20, "500KB": 500000, "1500": 1500, "64 KiB": 64 << 10, "10B": 10} {
		got, err := ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("%q = %d %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "KiB", "-1", "1.5MiB", "1TB", "9999999999GiB"} {
		if _, err := ParseByteSize(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	c, err := Parse([]byte("[limits]\nper_ip_rate = 100000\nper_ip_burst = \"2KiB\"\n"))
	if err != nil || c.Limits.PerIPRate != 100000 || c.Limits.PerIPBurst != 2048 {
		t.Fatalf("%v %+v", err, c)
	}
}

func TestWarnings(t *testing.T) {
	c, err := Parse([]byte("[admin]\nlisten = \"0.0.0.0:9273\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	// The warning names what leaks: the status page's player names and
	// client addresses, not only /metrics.
	w := strings.Join(c.Warnings(), "\n")
	for _, want := range []string{"admin.listen: 0.0.0.0:9273 is not a loopback address", "status page (player names, client addresses)", "/metrics", "admin.private_network = true"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q: %s", want, w)
		}
	}
	// A container's own network, said so: no warning.
	for _, quiet := range []string{"", "[admin]\nlisten = \"\"\n", "[admin]\nlisten = \"[::1]:9273\"\n", "[admin]\nlisten = \"0.0.0.0:9273\"\nprivate_network = true\n"} {
		c, err := Parse([]byte(quiet))
		if err != nil {
			t.Fatal(err)
		}
		if w := c.Warnings(); len(w) != 0 {
			t.Errorf("%q: warnings %q", quiet, w)
		}
	}
}

// A table of a module that is not registered is an unknown table (its keys
// are not listed again one by one).
func TestUnregisteredModuleTable(t *testing.T) {
	_, err := Parse([]byte("[a2s]\napp_id = 480\n"))
	if got := errorKeys(t, err); strings.Join(got, " ") != "a2s" || !strings.Contains(err.Error(), "a2s: unknown table") {
		t.Fatalf("%v", err)
	}
}

// decodeReason reads every form of the decoder's messages: with or without
// a line and a last key (quoted parts and all), and names the types; the
// line is left to the error's key (Config.Locate).
func TestDecodeReason(t *testing.T) {
	for msg, want := range map[string]string{
		`toml: line 2 (last key "a.b"): incompatible types: TOML value has type int64; destination has type string`:     "want a string, got an integer",
		`toml: (last key "a.b"): incompatible types: TOML value has type []any; destination has type slice`:             "want an array, got an array",
		`toml: line 3: Invalid integer "0660": cannot have leading zeroes`:                                              `Invalid integer "0660": cannot have leading zeroes`,
		`toml: line 4 (last key "q.\"a b\""): incompatible types: TOML value has type bool; destination has type float`: "want a float, got a boolean",
		`toml: line 5 (last key "m"): type mismatch for quake3.Master: expected table but found float64`:                "want a table, got a float",
		`toml: something else`: "something else",
		`incompatible types: TOML value has type time.Time; destination has type integer`: "want an integer, got a date-time",
		`incompatible types: TOML value has type x.Y; destination has type map`:           "want a table, got a value of type x.Y",
	} {
		if got := decodeReason(errors.New(msg)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", msg, got, want)
		}
	}
}

// TestCheckWarningsWithErrors: Check returns the warnings of a config that
// also has errors (Load returned the errors alone: warnings showed only once
// every error was fixed), leaving out a warning about a key in error.
func TestCheckWarningsWithErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.toml")
	// upstream.interval draws a warning (under 1 s) and an error (with the
	// timeout, not under stale_after): only the error is shown.
	text := "[admin]\nlisten = \"0.0.0.0:9273\"\n[listen]\nworkers = -1\n[feed]\nstale_after = \"1s\"\n" +
		"[upstream]\nprotocol = \"a2s\"\naddress = \"127.0.0.1:1\"\ninterval = \"500ms\"\ntimeout = \"1s\"\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, warnings, err := Check(path)
	var errs Errors
	if c == nil || !errors.As(err, &errs) {
		t.Fatalf("Check: %v, %v", c, err)
	}
	if got := errs.Error(); !strings.Contains(got, "listen.workers") || !strings.Contains(got, "upstream.interval: interval (500ms) plus timeout") {
		t.Errorf("errors: %s", got)
	}
	w := strings.Join(warnings, "\n")
	if !strings.Contains(w, "admin.listen: 0.0.0.0:9273 is not a loopback address") || strings.Contains(w, "upstream.interval") {
		t.Errorf("warnings: want admin.listen's, not upstream.interval's (in error):\n%s", w)
	}
	if _, err := Load(path); err == nil {
		t.Error("Load accepts what Check refuses")
	}
	if c, w, err := Check(filepath.Join(t.TempDir(), "missing.toml")); c != nil || w != nil || err == nil {
		t.Errorf("Check of a missing file: %v %v %v", c, w, err)
	}
}

// TestProvenTierKeys: [limits]' proven-source tier keys decode (0 turns the
// gate off, "0s" remembers no source) and their defaults are written out.
func TestProvenTierKeys(t *testing.T) {
	d := Defaults().Limits
	if d.UnprovenPacketRate != 20000 || d.UnprovenPacketBurst != 2000 || time.Duration(d.ProvenFor) != 10*time.Minute {
		t.Fatalf("defaults: %d, %d, %v", d.UnprovenPacketRate, d.UnprovenPacketBurst, time.Duration(d.ProvenFor))
	}
	c, err := Parse([]byte("[limits]\nunproven_packet_rate = 0\nunproven_packet_burst = 0\nproven_for = \"0s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Limits; l.UnprovenPacketRate != 0 || l.UnprovenPacketBurst != 0 || l.ProvenFor != 0 {
		t.Fatalf("got %+v", l)
	}
	c, err = Parse([]byte("[limits]\nunproven_packet_rate = 500\nunproven_packet_burst = 50\nproven_for = \"90s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Limits; l.UnprovenPacketRate != 500 || l.UnprovenPacketBurst != 50 || time.Duration(l.ProvenFor) != 90*time.Second {
		t.Fatalf("got %+v", l)
	}
}

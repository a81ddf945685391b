package config

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestDefaultConfig(t *testing.T) {
	c, err := Parse(Default)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen.UDP[0] != "0.0.0.0:27015" || !c.A2S.Enabled || c.A2S.AppID != 480 {
		t.Fatalf("%+v", c)
	}
	if c.ServerDoc["name"] != "queryd demo server" {
		t.Fatalf("demo state: %v", c.ServerDoc)
	}
	if !c.Listen.GSO {
		t.Fatal("listen.gso: want true by default")
	}
	if off, err := Parse([]byte("[listen]\ngso = false\n")); err != nil || off.Listen.GSO {
		t.Fatalf("gso = false: %v, %+v", err, off.Listen)
	}
	if time.Duration(c.Feed.StaleAfter) != 60*time.Second || c.Limits.PerIPRate != 256<<10 || c.Limits.PerIPBurst != 64<<10 {
		t.Fatalf("defaults: %+v %+v", c.Feed, c.Limits)
	}
	if c.Feed.MaxConns != 64 || c.Feed.MaxBuffered != 16<<20 || time.Duration(c.Feed.LineTimeout) != 10*time.Second {
		t.Fatalf("feed limits: %+v", c.Feed)
	}
}

func TestExampleConfigIsValid(t *testing.T) {
	b, err := os.ReadFile("../queryd.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(b); err != nil {
		t.Fatalf("queryd.toml.example: %v", err)
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
[a2s]
app_id = 70000
[admin]
listen = "everywhere"
[log]
level = "loud"
[nosuch]
x = 1
`
	_, err := Parse([]byte(cfg))
	var errs Errors
	if !errors.As(err, &errs) {
		// stale_after and per_ip_rate are decode errors: BurntSushi stops at the first.
		t.Logf("decode error: %v", err)
	}
	if err == nil {
		t.Fatal("accepted")
	}
	// Without the two decode errors, every remaining error is reported at once.
	cfg = strings.Replace(cfg, `stale_after = "soon"`, "", 1)
	cfg = strings.Replace(cfg, `per_ip_rate = "12 parsecs"`, "", 1)
	_, err = Parse([]byte(cfg))
	if !errors.As(err, &errs) {
		t.Fatalf("want Errors, got %T %v", err, err)
	}
	keys := map[string]bool{}
	for _, e := range errs {
		keys[e.Key] = true
	}
	for _, k := range []string{"listen.udp[1]", "listen.udp[2]", "listen.bogus", "feed.socket", "feed.mode",
		"feed.max_conns", "feed.max_buffered", "feed.line_timeout", "server.name", "a2s.app_id", "admin.listen", "log.level", "nosuch", "nosuch.x"} {
		if !keys[k] {
			t.Errorf("no error for %s; got %v", k, errs)
		}
	}
}

func TestDecodeErrorsNameTheKey(t *testing.T) {
	for cfg, key := range map[string]string{
		"[feed]\nstale_after = \"soon\"\n":         "feed.stale_after",
		"[limits]\nper_ip_rate = \"12 parsecs\"\n": "limits.per_ip_rate",
		"[listen]\nudp = \"0.0.0.0:1\"\n":          "listen.udp",
		"[a2s]\nenabled = \"yes\"\n":               "a2s.enabled",
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
	c, err := Parse([]byte("[a2s]\napp_id = 0\n[admin]\nlisten = \"0.0.0.0:9273\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(c.Warnings(), "\n")
	if !strings.Contains(w, "a2s.app_id") || !strings.Contains(w, "admin.listen") {
		t.Fatalf("warnings: %s", w)
	}
}

// FuzzParse: the config loader never panics, and what it accepts is valid.
func FuzzParse(f *testing.F) {
	f.Add(Default)
	f.Add([]byte("[listen]\nudp = [\"127.0.0.1:1\"]\n[server]\nname = \"x\"\n"))
	f.Add([]byte("[limits]\nper_ip_rate = \"1KiB\"\n"))
	f.Add([]byte("[server.players.1]\nname = 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		if len(c.Listen.UDP) == 0 || c.Limits.PerIPBurst < 1500 || c.ServerDoc == nil {
			t.Fatalf("accepted an invalid config: %+v", c)
		}
	})
}

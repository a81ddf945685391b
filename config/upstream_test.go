package config

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/module"
)

// pollStub stands in for a module with the polling capability
// (module.Poller) in the core's own tests.
type pollStub struct{ demoStub }

func (pollStub) Poll(context.Context, netip.AddrPort, module.PollOptions) (module.Polled, error) {
	return module.Polled{}, errors.New("a stub")
}

// pollers are the modules [upstream] may name in these tests: two that
// poll, one that does not.
var pollMods = []Module{pollStub{"a2s"}, pollStub{"quake3"}, demoStub("sqp")}

func parseUp(text string) (*Config, error) { return Parse([]byte(text), pollMods...) }

// [upstream]: off by default; on, its keys are typed, its defaults are 5 s
// and 2 s, and its address defaults to [relay] upstream.
func TestUpstreamParse(t *testing.T) {
	c, err := parseUp("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Upstream.On() || time.Duration(c.Upstream.Interval) != 5*time.Second || time.Duration(c.Upstream.Timeout) != 2*time.Second {
		t.Fatalf("defaults %+v", c.Upstream)
	}
	c, err = parseUp("[upstream]\nprotocol = \"quake3\"\naddress = \"127.0.0.1:27960\"\ninterval = \"10s\"\ntimeout = \"500ms\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Upstream.Protocol != "quake3" || c.UpstreamAddress() != "127.0.0.1:27960" ||
		time.Duration(c.Upstream.Interval) != 10*time.Second || time.Duration(c.Upstream.Timeout) != 500*time.Millisecond {
		t.Fatalf("%+v", c.Upstream)
	}
	c, err = parseUp("[relay]\nupstream = \"127.0.0.1:27961\"\n[upstream]\nprotocol = \"a2s\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.UpstreamAddress() != "127.0.0.1:27961" {
		t.Fatalf("address %q, want [relay] upstream's", c.UpstreamAddress())
	}
}

// Every wrong [upstream] key is reported with its key in one run.
func TestUpstreamErrors(t *testing.T) {
	withLocalAddrs(t, "127.0.0.1")
	for text, want := range map[string][]string{
		"[upstream]\nprotocol = \"gamespy4\"\n":                                                                {`upstream.protocol: "gamespy4": no module is named so; want one of ["a2s" "quake3"]`, "upstream.address: required"},
		"[upstream]\nprotocol = \"sqp\"\naddress = \"127.0.0.1:27016\"\n":                                      {`upstream.protocol: "sqp": that module cannot poll a game server; want one of ["a2s" "quake3"]`},
		"[upstream]\nprotocol = \"a2s\"\n":                                                                     {"upstream.address: required"},
		"[upstream]\nprotocol = \"a2s\"\naddress = \"nohost\"\n":                                               {"upstream.address: want HOST:PORT"},
		"[upstream]\nprotocol = \"a2s\"\naddress = \"127.0.0.1:0\"\n":                                          {"upstream.address: want a port from 1 to 65535"},
		"[listen]\nudp = [\"0.0.0.0:27015\"]\n[upstream]\nprotocol = \"a2s\"\naddress = \"127.0.0.1:27015\"\n": {"upstream.address: 127.0.0.1:27015 is queryd itself"},
		"[upstream]\nprotocol = \"a2s\"\naddress = \"127.0.0.1:27016\"\ninterval = \"10ms\"\ntimeout = \"1m\"\n": {
			"upstream.interval: want 100ms to 1h0m0s (default 5s), got 10ms", "upstream.timeout: want 10ms to 30s (default 2s), got 1m0s"},
		"[feed]\nstale_after = \"6s\"\n[upstream]\nprotocol = \"quake3\"\naddress = \"127.0.0.1:27016\"\n": {
			"upstream.interval: interval (5s) plus timeout (2s) must be under [feed] stale_after (6s)"},
		"[upstream]\nprotocol = \"a2s\"\naddress = \"127.0.0.1:27016\"\nport = 1\n": {"upstream.port: unknown key"},
	} {
		_, err := parseUp(text)
		var errs Errors
		if !errors.As(err, &errs) {
			t.Errorf("%q: %v, want Errors", text, err)
			continue
		}
		if len(errs) != len(want) {
			t.Errorf("%q: %d errors %v, want %d", text, len(errs), errs, len(want))
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %v\nwant %q", text, err, w)
			}
		}
	}
}

// Settings that work but may surprise are warned about.
func TestUpstreamWarnings(t *testing.T) {
	for text, want := range map[string]string{
		"[upstream]\naddress = \"127.0.0.1:27016\"\n":                                                   "upstream.address: set, but [upstream] protocol is not",
		"[upstream]\nprotocol = \"a2s\"\naddress = \"127.0.0.1:27016\"\ninterval = \"500ms\"\n":         "upstream.interval: 500ms polls the game server more than once a second",
		"[feed]\nstale_after = \"0s\"\n[upstream]\nprotocol = \"a2s\"\naddress = \"127.0.0.1:27016\"\n": "feed.stale_after: 0s: queryd keeps serving",
	} {
		c, err := parseUp(text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if w := strings.Join(c.Warnings(), "\n"); !strings.Contains(w, want) {
			t.Errorf("%q: warnings %q, want %q", text, w, want)
		}
	}
}

// UpstreamAddr resolves a name (localhost here) and refuses one that
// resolves to queryd itself, with the key the address came from.
func TestUpstreamAddr(t *testing.T) {
	withLocalAddrs(t, "127.0.0.1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := parseUp("[listen]\nudp = [\"0.0.0.0:27015\"]\n[upstream]\nprotocol = \"a2s\"\naddress = \"localhost:27016\"\n")
	if err != nil {
		t.Fatal(err)
	}
	ap, err := c.UpstreamAddr(ctx)
	if err != nil || ap.String() != "127.0.0.1:27016" {
		t.Fatalf("%v %v", ap, err)
	}
	c.Upstream.Address = "localhost:27015"
	var e *Error
	if _, err := c.UpstreamAddr(ctx); !errors.As(err, &e) || e.Key != "upstream.address" || !strings.Contains(e.Reason, "queryd itself") {
		t.Fatalf("%v", err)
	}
}

// A changed [upstream] needs a restart.
func TestUpstreamRestartKey(t *testing.T) {
	old, _ := parseUp("")
	c, _ := parseUp("[upstream]\nprotocol = \"a2s\"\naddress = \"127.0.0.1:27016\"\n")
	if keys := strings.Join(c.RestartKeys(old), ","); keys != "upstream" {
		t.Fatalf("restart keys %q", keys)
	}
}

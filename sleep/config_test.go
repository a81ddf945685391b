package sleep_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/agones"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/sleep"
)

// parse parses a config with [sleep] registered as the daemon does (after
// [agones], and a module that can poll for [upstream]).
func parse(t *testing.T, toml string) (*sleep.Config, error) {
	t.Helper()
	c, err := config.Parse([]byte(toml), quake3.Module{}, agones.ConfigModule{}, sleep.ConfigModule{})
	if err != nil {
		return nil, err
	}
	return c.Section(sleep.Name).(*sleep.Config), nil
}

// relayFront is a relay-mode server polling its game server: where sleep
// sees joins and readiness.
const relayFront = `
[relay]
upstream = "127.0.0.1:27961"
[upstream]
protocol = "quake3"
`

func TestConfigDefaults(t *testing.T) {
	c, err := parse(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.On() || time.Duration(c.ReadyTimeout) != sleep.DefaultReadyTimeout || c.WakesPerHour != sleep.DefaultWakesPerHour ||
		c.HoldTotal != sleep.DefaultHoldTotal || c.HoldBytes != sleep.DefaultHoldBytes {
		t.Fatalf("defaults %+v", c)
	}
	c, err = parse(t, relayFront+"[sleep]\nafter = \"15m\"\nstart = [\"true\"]\nstop = [\"/bin/true\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Settings()
	if !c.On() || s.After != 15*time.Minute || s.Start[0] != "true" || s.Stop[0] != "/bin/true" || s.Hold.PerSource != sleep.DefaultHoldPerSource {
		t.Fatalf("settings %+v", s)
	}
}

// TestConfigErrors: every bad key is an error with its key, in one run.
func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "script")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		toml, key, has string
	}{
		{`after = "500ms"`, "sleep.after", "0s (never sleep) or 1s"},
		{`after = "1m"` + "\nstart = []", "sleep.start", "array of its program"},
		{`after = "1m"` + "\nstop = [\"no-such-program-x\"]", "sleep.stop", "not found on PATH"},
		{`after = "1m"` + "\nstart = [\"./start.sh\"]", "sleep.start", "not a relative path"},
		{`after = "1m"` + "\nstart = [\"/no/such/file\"]", "sleep.start", "no such file"},
		{`after = "1m"` + "\nstart = [\"" + notExec + "\"]", "sleep.start", "not executable"},
		{`after = "1m"` + "\nstart = [\"" + dir + "\"]", "sleep.start", "not a regular file"},
		{`ready_timeout = "0s"`, "sleep.ready_timeout", "1s to 1h0m0s"},
		{`stop_timeout = "2h"`, "sleep.stop_timeout", "1s to 1h0m0s"},
		{`wakes_per_hour = 0`, "sleep.wakes_per_hour", "1 to 3600"},
		{`hold_per_source = 0`, "sleep.hold_per_source", "1 to 65536"},
		{`hold_total = 8` + "\nhold_per_source = 16", "sleep.hold_per_source", "more than hold_total"},
		{`hold_bytes = "2GiB"`, "sleep.hold_bytes", "2048 to 1073741824"},
		{`hold_bytes_per_source = "2MiB"`, "sleep.hold_bytes_per_source", "more than hold_bytes"},
		{`after = "1m"` + "\nready_timeout = \"2s\"", "sleep.ready_timeout", "not longer than [upstream] timeout"},
	} {
		toml := relayFront + "timeout = \"2s\"\n[sleep]\n" + tc.toml + "\n"
		for _, k := range []string{"start", "stop"} {
			if !strings.Contains(tc.toml, k+" =") {
				toml += k + " = [\"true\"]\n"
			}
		}
		_, err := parse(t, toml)
		var errs config.Errors
		if !errors.As(err, &errs) || !hasError(errs, tc.key, tc.has) {
			t.Errorf("%s: got %v, want %s: …%s…", tc.toml, err, tc.key, tc.has)
		}
	}
}

// TestConfigJoins: [sleep] only where queryd sees a player arrive (relay,
// divert, or a feed the matchmaking wakes through) and knows when the game
// server is up ([upstream], or a feeder); never with [agones].
func TestConfigJoins(t *testing.T) {
	const on = "[sleep]\nafter = \"1m\"\nstart = [\"true\"]\nstop = [\"true\"]\n"
	for _, tc := range []struct {
		name, toml, has string
	}{
		{"alone", on, "cannot see a player arrive"},
		{"upstream only", "[upstream]\nprotocol = \"quake3\"\naddress = \"127.0.0.1:27961\"\n" + on, "cannot see a player arrive"},
		{"relay without readiness", "[relay]\nupstream = \"127.0.0.1:27961\"\n" + on, "cannot know when the game server it started is up"},
		{"agones", "[feed]\n[agones]\n" + on, "[agones] runs this game server's life"},
	} {
		_, err := parse(t, tc.toml)
		var errs config.Errors
		if !errors.As(err, &errs) || !hasError(errs, "sleep", tc.has) {
			t.Errorf("%s: got %v, want sleep: …%s…", tc.name, err, tc.has)
		}
	}
	_, err := parse(t, relayFront+"[quake3]\nenabled = false\n[[quake3.masters]]\naddress = \"master.example.org:27950\"\nheartbeat = \"QuakeArena-1\"\n"+on)
	var errs config.Errors
	if !errors.As(err, &errs) || !hasError(errs, "quake3.enabled", "nobody would answer the masters' getinfo") {
		t.Errorf("masters with [quake3] off: got %v", err)
	}
	for _, tc := range []struct{ name, toml string }{
		{"relay and upstream", relayFront + on},
		{"a feed", "[feed]\nstale_after = \"10s\"\n" + on},
		{"relay and a feeder", "[relay]\nupstream = \"127.0.0.1:27961\"\n[feed]\n" + on},
		{"off anywhere", "[sleep]\nafter = \"0s\"\n"},
	} {
		if _, err := parse(t, tc.toml); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestConfigWarnings: start and stop without after; divert (a join seen
// on the [xdp] interfaces alone, nothing held while it wakes).
func TestConfigWarnings(t *testing.T) {
	c, err := config.Parse([]byte("[sleep]\nstart = [\"true\"]\n"), quake3.Module{}, agones.ConfigModule{}, sleep.ConfigModule{})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(c.Warnings(), "\n"); !strings.Contains(w, "sleep.after: 0s: the server never sleeps") {
		t.Errorf("warnings:\n%s", w)
	}
	const divert = "[listen]\nudp = []\ndivert = [\"198.18.0.1:27960\"]\n[xdp]\ninterfaces = [\"eth0\"]\n" +
		"[upstream]\nprotocol = \"quake3\"\naddress = \"198.18.0.1:27960\"\n" +
		"[sleep]\nafter = \"1m\"\nstart = [\"true\"]\nstop = [\"true\"]\n"
	if c, err = config.Parse([]byte(divert), quake3.Module{}, agones.ConfigModule{}, sleep.ConfigModule{}); err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(c.Warnings(), "\n"); !strings.Contains(w, "sleep: [listen] divert: the XDP program sees a join only on the [xdp] interfaces") {
		t.Errorf("divert's warnings:\n%s", w)
	}
}

func hasError(errs config.Errors, key, has string) bool {
	for _, e := range errs {
		if e.Key == key && strings.Contains(e.Reason, has) {
			return true
		}
	}
	return false
}

package agones

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/config"
)

// parse parses a config with [agones] registered, as the daemon will.
func parse(t *testing.T, toml string) (*Config, error) {
	t.Helper()
	c, err := config.Parse([]byte(toml), ConfigModule{})
	if err != nil {
		return nil, err
	}
	return c.Section(Name).(*Config), nil
}

func TestConfigOn(t *testing.T) {
	t.Setenv(SDKPortEnv, "")
	for _, c := range []struct {
		toml string
		on   bool
		sdk  string
	}{
		{"", false, "localhost:9358"},
		{"[agones]\n", true, "localhost:9358"},
		{"[agones]\nenabled = false\n", false, "localhost:9358"},
		{"[agones]\nsdk = \"127.0.0.1:19358\"\n", true, "127.0.0.1:19358"},
		{"[agones]\nsdk = \"[::1]:9358\"\n", true, "[::1]:9358"},
	} {
		a, err := parse(t, c.toml)
		if err != nil {
			t.Fatalf("%q: %v", c.toml, err)
		}
		if a.On() != c.on || a.SDK != c.sdk {
			t.Errorf("%q: on %v sdk %q, want %v %q", c.toml, a.On(), a.SDK, c.on, c.sdk)
		}
	}
	a, _ := parse(t, "[agones]\n")
	if a.Mapping() != (Mapping{List: "players", Counter: "players", Port: "default"}) ||
		time.Duration(a.Timeout) != DefaultTimeout || time.Duration(a.Interval) != DefaultInterval {
		t.Errorf("defaults: %+v", a)
	}
}

// TestConfigEnv: the SDK's address defaults from AGONES_SDK_HTTP_PORT, as
// Agones' SDKs find it; a bad value is an error naming the variable.
func TestConfigEnv(t *testing.T) {
	t.Setenv(SDKPortEnv, "19999")
	a, err := parse(t, "[agones]\n")
	if err != nil || a.SDK != "localhost:19999" {
		t.Fatalf("sdk %v, err %v", a, err)
	}
	t.Setenv(SDKPortEnv, "nine")
	_, err = parse(t, "[agones]\n")
	if err == nil || !strings.Contains(err.Error(), "agones.sdk: ") || !strings.Contains(err.Error(), SDKPortEnv+`="nine"`) {
		t.Errorf("a bad %s: %v", SDKPortEnv, err)
	}
	if _, err := parse(t, "[agones]\nsdk = \"localhost:9358\"\n"); err != nil {
		t.Errorf("a bad %s with sdk set: %v", SDKPortEnv, err)
	}
}

// TestConfigErrors: every bad key is reported, each with its key.
func TestConfigErrors(t *testing.T) {
	t.Setenv(SDKPortEnv, "")
	for _, c := range []struct{ toml, key, says string }{
		{`sdk = "localhost"`, "agones.sdk", "HOST:PORT"},
		{`sdk = ":9358"`, "agones.sdk", "HOST:PORT"},
		{`sdk = "http://localhost:9358"`, "agones.sdk", "HOST:PORT"},
		{`sdk = "localhost:0"`, "agones.sdk", "port from 1 to 65535"},
		{`sdk = "localhost:http"`, "agones.sdk", "port from 1 to 65535"},
		{`sdk = 9358`, "agones.sdk", ""},
		{`timeout = "1ms"`, "agones.timeout", "100ms to 30s"},
		{`interval = "2h"`, "agones.interval", "100ms to 1m0s"},
		{`interval = "soon"`, "agones.interval", "duration"},
		{`players_list = "` + strings.Repeat("p", 64) + `"`, "agones.players_list", "at most 63"},
		{`sdkk = "x"`, "agones.sdkk", "unknown key"},
	} {
		_, err := parse(t, "[agones]\n"+c.toml+"\n")
		var errs config.Errors
		if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Key != c.key || !strings.Contains(errs[0].Reason, c.says) {
			t.Errorf("%s: got %v, want one error at %s saying %q", c.toml, err, c.key, c.says)
		}
	}
	_, err := parse(t, "[agones]\nsdk = \"x\"\ntimeout = \"0s\"\ninterval = \"0s\"\n")
	var errs config.Errors
	if !errors.As(err, &errs) || len(errs) != 3 {
		t.Errorf("three bad keys: %v", err)
	}
}

// TestConfigStale: interval plus timeout must be under [feed] stale_after,
// or queryd would go silent between two reads of an SDK server that answers.
func TestConfigStale(t *testing.T) {
	_, err := parse(t, "[feed]\nstale_after = \"2s\"\n[agones]\ninterval = \"1s\"\ntimeout = \"1s\"\n")
	if err == nil || !strings.Contains(err.Error(), "agones.interval: interval (1s) plus timeout (1s) must be under [feed] stale_after (2s)") {
		t.Errorf("got %v", err)
	}
	if _, err := parse(t, "[feed]\nstale_after = \"3s\"\n[agones]\ninterval = \"1s\"\ntimeout = \"1s\"\n"); err != nil {
		t.Error(err)
	}
	if _, err := parse(t, "[feed]\nstale_after = \"2s\"\n[agones]\nenabled = false\ninterval = \"1s\"\ntimeout = \"1s\"\n"); err != nil {
		t.Errorf("off, yet checked against stale_after: %v", err)
	}
}

func TestConfigWarnings(t *testing.T) {
	c, err := config.Parse([]byte("[feed]\nstale_after = \"0s\"\n[agones]\nplayers_list = \"\"\nplayers_counter = \"\"\n"), ConfigModule{})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(c.Warnings(), "\n")
	if !strings.Contains(w, "agones.players_list:") || !strings.Contains(w, "feed.stale_after: 0s: queryd keeps serving the GameServer's") {
		t.Errorf("warnings:\n%s", w)
	}
}

func TestConfigRestartKeys(t *testing.T) {
	old, _ := config.Parse([]byte("[agones]\n"), ConfigModule{})
	same, _ := config.Parse([]byte("[agones]\n"), ConfigModule{})
	changed, _ := config.Parse([]byte("[agones]\nplayers_list = \"names\"\n"), ConfigModule{})
	if k := same.RestartKeys(old); len(k) != 0 {
		t.Errorf("unchanged: %v", k)
	}
	if k := changed.RestartKeys(old); len(k) != 1 || k[0] != "agones" {
		t.Errorf("changed: %v", k)
	}
}

// TestConfigHost: in host mode each server file has its own [agones],
// with its own SDK server.
func TestConfigHost(t *testing.T) {
	t.Setenv(SDKPortEnv, "")
	dir := t.TempDir()
	for name, body := range map[string]string{
		"one.toml":   "[listen]\nudp = [\"127.0.0.1:27101\"]\n[agones]\nsdk = \"127.0.0.1:19001\"\n",
		"two.toml":   "[listen]\nudp = [\"127.0.0.1:27102\"]\n[agones]\nsdk = \"127.0.0.1:19002\"\n",
		"three.toml": "[listen]\nudp = [\"127.0.0.1:27103\"]\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h, err := config.ParseHost([]byte("[servers]\ninclude = [\"*.toml\"]\n"), dir, ConfigModule{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range h.Servers {
		a := s.Config.Section(Name).(*Config)
		got[s.Name] = fmt.Sprint(a.On(), " ", a.SDK)
	}
	want := map[string]string{"one": "true 127.0.0.1:19001", "two": "true 127.0.0.1:19002", "three": "false localhost:9358"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestDeployConfig: the sidecar's config in deploy/kubernetes/queryd.toml
// (the ConfigMap the GameServer and the Fleet mount) parses, with [agones]
// on, its SDK address from AGONES_SDK_HTTP_PORT as Agones sets it, and the
// game port's name one of the GameServer's ports.
func TestDeployConfig(t *testing.T) {
	t.Setenv(SDKPortEnv, "9358")
	b, err := os.ReadFile("../deploy/kubernetes/queryd.toml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := parse(t, string(b))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !a.On() || a.SDK != "localhost:9358" {
		t.Errorf("[agones] %+v", a)
	}
	gs, err := os.ReadFile("../deploy/kubernetes/gameserver.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gs), "- name: "+a.PortName+" ") {
		t.Errorf("[agones] port_name %q: no such port in gameserver.yaml", a.PortName)
	}
}

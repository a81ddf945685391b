package config_test

import (
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/responder"
)

// TestHostBudget: [host] per_ip_rate and per_ip_burst are the host-wide
// per-IP budget; left out (or 0) each is responder.HostFactor times the
// main file's [limits] value; a burst under one datagram or a negative
// rate is an error with its key.
func TestHostBudget(t *testing.T) {
	for _, c := range []struct {
		text       string
		rate, burs int
	}{
		{"", 4 * 256 << 10, 4 * 64 << 10},
		{"[limits]\nper_ip_rate = \"10KiB\"\nper_ip_burst = \"2KiB\"\n", 40 << 10, 8 << 10},
		{"[host]\nper_ip_rate = \"1MiB\"\n", 1 << 20, 4 * 64 << 10},
		{"[host]\nper_ip_rate = \"32KiB\"\nper_ip_burst = \"4KiB\"\n[limits]\nper_ip_rate = \"64KiB\"\n", 32 << 10, 4 << 10},
		{"[host]\nper_ip_rate = 0\nper_ip_burst = 0\n", 4 * 256 << 10, 4 * 64 << 10},
	} {
		cfg, err := config.Parse([]byte(c.text))
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		got := cfg.HostBudget()
		if got.PerIPRate != c.rate || got.PerIPBurst != c.burs || got.TrackedIPs != cfg.Limits.TrackedIPs {
			t.Errorf("%q: host budget %+v, want rate %d, burst %d, %d tracked", c.text, got, c.rate, c.burs, cfg.Limits.TrackedIPs)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%q: %v", c.text, err)
		}
	}
	for text, key := range map[string]string{
		"[host]\nper_ip_burst = 1000\n":     "host.per_ip_burst",
		"[host]\nper_ip_rate = -1\n":        "host.per_ip_rate",
		"[host]\nper_ip_rates = \"1MiB\"\n": "host.per_ip_rates",
	} {
		_, err := config.Parse([]byte(text))
		if err == nil || !strings.Contains(err.Error(), key+":") {
			t.Errorf("%q: error %v, want one for %s", text, err, key)
		}
	}
	if responder.HostFactor != 4 {
		t.Errorf("HostFactor %d: queryd.toml.example and SECURITY.md say 4", responder.HostFactor)
	}
}

// TestHostBudgetCopied: a server file gets the main file's [host], as it
// gets [admin] and [xdp].
func TestHostBudgetCopied(t *testing.T) {
	h := loadHost(t, map[string]string{
		"queryd.toml": hostMain + "[host]\nper_ip_rate = \"2MiB\"\n",
		"s/a.toml":    udpServer("127.0.0.1:27115", ""),
	})
	if a := h.Server("a"); a == nil || a.Config.Host.PerIPRate != 2<<20 || h.Main.HostBudget().PerIPRate != 2<<20 {
		t.Errorf("servers %v (failed %v): [host] not the main file's", names(h), failed(h))
	}
}

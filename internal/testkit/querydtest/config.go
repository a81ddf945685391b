package querydtest

import (
	"bytes"
	"maps"
	"os"
	"testing"

	"github.com/BurntSushi/toml"
)

// Tables are a config's TOML tables by name, each its keys; [server] is a
// table like the others. A key may hold a []map[string]any for an array
// of tables (e.g. quake3's "masters").
type Tables map[string]map[string]any

// Over returns t with each of layers laid on top in turn: a layer's key
// replaces t's, and a key set to nil removes it. t and the layers are
// not changed.
func (t Tables) Over(layers ...Tables) Tables {
	out := Tables{}
	for name, keys := range t {
		out[name] = maps.Clone(keys)
	}
	for _, layer := range layers {
		for name, keys := range layer {
			if out[name] == nil {
				out[name] = map[string]any{}
			}
			for k, v := range keys {
				if v == nil {
					delete(out[name], k)
					continue
				}
				out[name][k] = v
			}
		}
	}
	return out
}

// Base is the config every daemon of the harness starts from: its UDP
// and admin addresses, its feed socket with a stale_after (60 s) longer
// than any test, and logs at info level as text, which Start reads.
func (d *Daemon) Base() Tables {
	return Tables{
		"listen": {"udp": []string{d.UDPAddr}},
		"feed":   {"socket": d.Socket, "stale_after": "60s"},
		"admin":  {"listen": d.AdminAddr},
		"log":    {"level": "info", "format": "text"},
	}
}

// WriteConfig writes the daemon's config file: Base with layers on top.
// Start writes it again with new ports, from the same layers, when the
// first start finds one taken.
func (d *Daemon) WriteConfig(t testing.TB, layers ...Tables) {
	t.Helper()
	d.layers = layers
	tables := d.Base().Over(layers...)
	d.socketInConfig = tables["feed"]["socket"] == d.Socket
	doc := map[string]any{}
	for name, keys := range tables {
		doc[name] = keys
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		t.Fatalf("encoding the config: %v", err)
	}
	if err := os.WriteFile(d.ConfigPath, buf.Bytes(), 0o600); err != nil {
		t.Fatalf("writing the config: %v", err)
	}
}

// ConfigText is the config file as written.
func (d *Daemon) ConfigText() string {
	b, _ := os.ReadFile(d.ConfigPath)
	return string(b)
}

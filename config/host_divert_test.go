package config_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// divertServer is a server file diverting game (and listening on udp,
// when set).
func divertServer(game, udp string) string {
	s := "[listen]\ndivert = [\"" + game + "\"]\n"
	if udp != "" {
		s += "udp = [\"" + udp + "\"]\n"
	}
	return s
}

// xdpMain is a main file running the included servers with [xdp]
// interfaces (host-wide: each server's divert is checked against it).
const xdpMain = "[servers]\ninclude = [\"s/*.toml\"]\n[xdp]\ninterfaces = [\"lo\"]\n"

// TestHostDivertOverlaps: a server file's divert addresses are occupied
// like its listen addresses: a later file diverting or listening on one
// (wildcards included) is refused with the key and both files; diverting
// distinct addresses is fine.
func TestHostDivertOverlaps(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1")
	for _, tc := range []struct {
		a, b string
		key  string // b's error's key; "" for no overlap
	}{
		{divertServer("198.18.0.1:27015", ""), divertServer("198.18.0.1:27015", ""), "listen.divert[0]"},
		{divertServer("198.18.0.1:27015", ""), udpServer("198.18.0.1:27015", ""), "listen.udp[0]"},
		{divertServer("198.18.0.1:27015", ""), udpServer("0.0.0.0:27015", ""), "listen.udp[0]"},
		{udpServer("198.18.0.1:27015", ""), divertServer("198.18.0.1:27015", ""), "listen.divert[0]"},
		{udpServer("0.0.0.0:27015", ""), divertServer("198.18.0.1:27015", ""), "listen.divert[0]"},
		{udpServer("[::]:27015", ""), divertServer("198.18.0.1:27015", ""), "listen.divert[0]"},
		{divertServer("198.18.0.1:27015", ""), divertServer("198.18.0.1:27016", "198.18.0.1:27015"), "listen.udp[0]"},
		{divertServer("198.18.0.1:27015", ""), divertServer("198.18.0.1:27016", ""), ""},
		{divertServer("198.18.0.1:27015", ""), divertServer("198.18.0.2:27015", ""), ""},
		{divertServer("198.18.0.1:27015", ""), udpServer("198.18.0.2:27015", ""), ""},
	} {
		h := loadHost(t, map[string]string{"queryd.toml": xdpMain, "s/a.toml": tc.a, "s/b.toml": tc.b})
		msg := failed(h)["b.toml"]
		if m := failed(h)["a.toml"]; m != "" {
			t.Fatalf("%q refused: %s", tc.a, m)
		}
		a := filepath.Join(filepath.Dir(h.Path), "s", "a.toml")
		switch {
		case tc.key == "" && (msg != "" || !slices.Equal(names(h), []string{"a", "b"})):
			t.Errorf("%q then %q: %v %q, want no overlap", tc.a, tc.b, names(h), msg)
		case tc.key != "" && (!strings.Contains(msg, "b.toml: "+tc.key+": ") || !strings.Contains(msg, a) || !slices.Equal(names(h), []string{"a"})):
			t.Errorf("%q then %q: %v %q, want %s naming %s", tc.a, tc.b, names(h), msg, tc.key, a)
		}
	}
}

// TestHostDivertNeedsMainXDP: a server file's divert is checked against the
// main file's [xdp] (a server file may not have one): with the main file's
// interfaces it loads, and its config carries them; without, the server
// file is refused saying what divert needs and naming the main file.
func TestHostDivertNeedsMainXDP(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1")
	h := loadHost(t, map[string]string{"queryd.toml": xdpMain, "s/a.toml": divertServer("198.18.0.1:27015", "")})
	if len(h.Failed) > 0 || !slices.Equal(names(h), []string{"a"}) {
		t.Fatalf("servers %v, failed %v: want a", names(h), failed(h))
	}
	if c := h.Server("a").Config; !slices.Equal(c.XDP.Interfaces, []string{"lo"}) || len(c.Listen.UDP) != 0 {
		t.Errorf("a: [xdp] interfaces %v, [listen] udp %v: want the main file's, and none", c.XDP.Interfaces, c.Listen.UDP)
	}
	h = loadHost(t, map[string]string{"queryd.toml": "[servers]\ninclude = [\"s/*.toml\"]\n", "s/a.toml": divertServer("198.18.0.1:27015", "")})
	msg := failed(h)["a.toml"]
	if len(h.Servers) != 0 || !strings.Contains(msg, "listen.divert: divert needs [xdp] interfaces") || !strings.Contains(msg, h.Path) {
		t.Errorf("servers %v, a.toml %q: want it refused, saying divert needs the main file's [xdp] interfaces", names(h), msg)
	}
}

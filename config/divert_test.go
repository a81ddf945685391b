package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/queryd/queryd/xdp"
)

// [listen] divert: accepted with [xdp] interfaces and nothing else in
// [listen]; each misuse refused with its key and what divert needs.
func TestDivertValidation(t *testing.T) {
	const xdp = "[xdp]\ninterfaces = [\"eth0\"]\n"
	cases := []struct {
		name, toml, want string // want "": accepted
	}{
		{"alone", "[listen]\ndivert = [\"198.18.0.1:27015\"]\n" + xdp, ""},
		{"beside udp", "[listen]\nudp = [\"198.18.0.1:27016\"]\ndivert = [\"198.18.0.1:27015\"]\n" + xdp, ""},
		{"no xdp", "[listen]\ndivert = [\"198.18.0.1:27015\"]\n", "listen.divert: divert needs [xdp] interfaces"},
		{"no xdp says relay", "[listen]\ndivert = [\"198.18.0.1:27015\"]\n", "relay mode ([relay] upstream)"},
		{"wildcard", "[listen]\ndivert = [\"0.0.0.0:27015\"]\n" + xdp, "listen.divert[0]: want the game server's own address"},
		{"port 0", "[listen]\ndivert = [\"198.18.0.1:0\"]\n" + xdp, "listen.divert[0]: want"},
		{"also udp", "[listen]\nudp = [\"0.0.0.0:27015\"]\ndivert = [\"198.18.0.1:27015\"]\n" + xdp, "also in [listen] udp"},
		{"with relay", "[listen]\nudp = [\"0.0.0.0:27016\"]\ndivert = [\"198.18.0.1:27015\"]\n[relay]\nupstream = \"127.0.0.1:27017\"\n" + xdp, "not with [relay] upstream"},
		{"bad element", "[listen]\ndivert = [\"nope\"]\n" + xdp, "listen.divert[0]: want IP:PORT"},
	}
	for _, c := range cases {
		cfg, err := Parse([]byte(c.toml))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && len(cfg.Listen.Divert) != 1:
			t.Errorf("%s: divert %v", c.name, cfg.Listen.Divert)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

// queryd check says what divert needs (a warning: the config cannot show
// the privileges).
func TestDivertCheckSaysNeeds(t *testing.T) {
	cfg, err := Parse([]byte("[listen]\ndivert = [\"198.18.0.1:27015\"]\n[xdp]\ninterfaces = [\"eth0\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(cfg.Warnings(), "\n")
	if !strings.Contains(w, "listen.divert: queryd refuses to start") || !strings.Contains(w, "CAP_BPF") || !strings.Contains(w, "relay mode") {
		t.Errorf("warnings %q", w)
	}
	if len(cfg.Listen.UDP) != 0 {
		t.Errorf("udp %v: the default should be dropped with divert alone", cfg.Listen.UDP)
	}
}

// [listen] divert_protocols (issue 39 item 7): what divert takes is the
// [upstream] protocol by default, the listed protocols when set, every
// protocol on without either; a listed protocol must exist and be on.
func TestDivertProtocols(t *testing.T) {
	const on = "[a2s]\nenabled = true\n[quake3]\nenabled = true\n" // the stubs are off by default
	const base = "[xdp]\ninterfaces = [\"eth0\"]\n[listen]\ndivert = [\"198.18.0.1:27015\"]\n"
	const up = "[upstream]\nprotocol = \"quake3\"\naddress = \"198.18.0.1:27015\"\n"
	cases := []struct {
		name, toml string
		takes      []string // nil: every protocol on
		err        string
	}{
		{"upstream's by default", base + up + on, []string{"quake3"}, ""},
		{"listed", base + "divert_protocols = [\"quake3\", \"a2s\"]\n" + up + on, []string{"quake3", "a2s"}, ""},
		{"feed: every protocol on", base + on, nil, ""},
		{"unknown", base + "divert_protocols = [\"a2z\"]\n", nil, "listen.divert_protocols[0]: \"a2z\": no protocol is named so"},
		{"off", base + "divert_protocols = [\"sqp\"]\n", nil, "listen.divert_protocols[0]: \"sqp\": [sqp] is off"},
		{"twice", base + "divert_protocols = [\"a2s\", \"a2s\"]\n" + on, nil, "listen.divert_protocols[1]: \"a2s\" is listed twice"},
		{"upstream's off", base + up + "[quake3]\nenabled = false\n", nil, "listen.divert: divert takes the [upstream] protocol's queries"},
		{"without divert", "[listen]\ndivert_protocols = [\"a2s\"]\n", nil, "listen.divert_protocols: only with [listen] divert"},
	}
	for _, c := range cases {
		cfg, err := Parse([]byte(c.toml), pollMods...)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := cfg.DivertTakes(); !slices.Equal(got, c.takes) {
			t.Errorf("%s: DivertTakes %q, want %q", c.name, got, c.takes)
		}
	}
}

// TestDivertNeedsKernels: the kernels the message names are the fast
// path's own (xdp.KernelXDP loads the program, xdp.KernelTCX has tcx).
func TestDivertNeedsKernels(t *testing.T) {
	for _, want := range []string{"Linux " + xdp.KernelXDP.String() + " or later", "tcx from " + xdp.KernelTCX.String()} {
		if !strings.Contains(DivertNeeds(), want) {
			t.Errorf("DivertNeeds() %q does not say %q", DivertNeeds(), want)
		}
	}
}

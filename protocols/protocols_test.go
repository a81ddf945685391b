package protocols

import (
	"slices"
	"testing"

	"github.com/queryd/queryd/daemon"
)

// Every module has a name of its own, and Names and ConfigModules follow
// List's order.
func TestList(t *testing.T) {
	names := Names()
	if len(names) != len(List()) || len(ConfigModules()) != len(List()) {
		t.Fatalf("Names %v, ConfigModules %d, List %d", names, len(ConfigModules()), len(List()))
	}
	for i, m := range ConfigModules() {
		if m.Name() != names[i] || names[i] == "" {
			t.Errorf("module %d: %q, Names says %q", i, m.Name(), names[i])
		}
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(names) {
		t.Errorf("two modules of one name: %v", names)
	}
	l := List()
	l[0] = nil
	if List()[0] == nil {
		t.Error("List hands out its own slice")
	}
}

// The modules that run services beside the responder (SAGL's HTTP
// listener, Quake 3's heartbeats) are daemon.Servicers; no module carries
// an empty Services (a protocol package cannot assert it: none imports
// daemon, so the list's test does).
func TestServicers(t *testing.T) {
	want := map[string]bool{"sagl": true, "quake3": true}
	for _, m := range List() {
		if _, ok := m.(daemon.Servicer); ok != want[m.Name()] {
			t.Errorf("%s: Servicer %v, want %v", m.Name(), ok, want[m.Name()])
		}
	}
}

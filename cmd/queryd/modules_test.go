package main

import (
	"testing"

	"github.com/queryd/queryd/daemon"
)

// TestServicers: the modules that run services beside the responder (SAGL's
// HTTP listener, Quake 3's heartbeats) are daemon.Servicers; no module
// carries an empty Services (a protocol package cannot assert it: none
// imports daemon, so this list's test does).
func TestServicers(t *testing.T) {
	want := map[string]bool{"sagl": true, "quake3": true}
	for _, m := range modules {
		if _, ok := m.(daemon.Servicer); ok != want[m.Name()] {
			t.Errorf("%s: Servicer %v, want %v", m.Name(), ok, want[m.Name()])
		}
	}
}

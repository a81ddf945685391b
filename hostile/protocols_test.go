package hostile

import (
	"slices"
	"testing"

	"github.com/queryd/queryd/protocols"
)

// TestEveryProtocolAttacked: the suite's per-protocol lists follow the
// registration list (protocols.List), so that a new protocol fails here
// until it has its attacks. garbage_test.go's demux is the daemon's order
// of every module with its Claims; unprovenRequests has requests of every
// module, each claimed by it; TestAmplification measures a request of
// every module; baseTables turns every module on.
func TestEveryProtocolAttacked(t *testing.T) {
	names := protocols.Names()
	var order []string
	for _, d := range demux {
		order = append(order, d.name)
	}
	if !slices.Equal(order, names) {
		t.Errorf("garbage_test.go's demux is %v; the registration list is %v", order, names)
	}
	requested, measured := map[string]bool{}, map[string]bool{}
	for _, r := range unprovenRequests() {
		if got := protocolOf(r.Bytes); got != r.Protocol {
			t.Errorf("unprovenRequests: %s %q is claimed by %s", r.Protocol, r.Name, got)
		}
		requested[r.Protocol] = true
	}
	for _, r := range ampConfigs()[0].reqs {
		measured[protocolOf(r.req)] = true
	}
	tables := baseTables()
	for _, name := range names {
		if !requested[name] {
			t.Errorf("unprovenRequests has no request of %s", name)
		}
		if !measured[name] {
			t.Errorf("TestAmplification measures no request of %s", name)
		}
		if tables[name]["enabled"] != true {
			t.Errorf("baseTables leaves [%s] off", name)
		}
	}
}

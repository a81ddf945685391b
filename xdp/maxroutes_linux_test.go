//go:build linux

package xdp

import "testing"

// TestMaxRoutesMirrored: maxRoutes, which the route mirror caps itself at,
// is the routes map's size in the object (MAX_ROUTES in bpf/consts.h, a
// #define bpf2go cannot carry over).
func TestMaxRoutesMirrored(t *testing.T) {
	spec, err := loadQueryd()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := spec.Maps["routes"]
	if !ok {
		t.Fatal("the object has no routes map")
	}
	if m.MaxEntries != maxRoutes {
		t.Errorf("routes holds %d entries in the object, maxRoutes is %d: change them together", m.MaxEntries, maxRoutes)
	}
}

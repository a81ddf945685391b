//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"os"
	"testing"
)

// TestXDPLoads: the kernel's verifier accepts the daemon's unbound program
// and the tests' (root only: loading needs CAP_BPF; other users skip,
// saying so). The device-bound one needs a device that supports it (a
// veth): the namespace tests attach it.
func TestXDPLoads(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("loading the XDP program needs root (CAP_BPF): skipped")
	}
	if err := loadUnbound(); err != nil {
		t.Fatalf("%+v", err)
	}
	var tobjs querydtestObjects
	if err := loadQuerydtestObjects(&tobjs, nil); err != nil {
		t.Fatalf("%+v", err)
	}
	tobjs.Close()
}

// loadUnbound loads the maps and the unbound program and frees them.
func loadUnbound() error {
	spec, err := loadQueryd()
	if err != nil {
		return err
	}
	f := &FastPath{spec: spec}
	if err := f.loadMaps(); err != nil {
		return err
	}
	defer f.maps.Close()
	p, err := f.loadProgram("queryd_xdp", 0, false)
	if err != nil {
		return err
	}
	return p.Close()
}

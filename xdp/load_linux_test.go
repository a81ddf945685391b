//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"os"
	"testing"
)

// TestXDPLoads: the kernel's verifier accepts both programs (root only:
// loading needs CAP_BPF; other users skip, saying so).
func TestXDPLoads(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("loading the XDP program needs root (CAP_BPF): skipped")
	}
	var objs querydObjects
	if err := loadQuerydObjects(&objs, nil); err != nil {
		t.Fatalf("%+v", err)
	}
	objs.Close()
}

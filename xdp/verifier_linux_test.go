//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"errors"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/cilium/ebpf"
)

// verifierCeiling is the most instructions the kernel's verifier may
// process to accept the unbound program (its log's "processed N insns";
// the kernel's own limit is 1,000,000). On Linux 6.18 it processed
// 436,671 before the host-wide budget and the Quake 3 line reader and
// 451,841 with them; the ceiling leaves about 15 % above that for other
// kernels and small changes. A change that passes it costs the verifier
// (and every load) much more: measure it and raise the ceiling in the same
// commit, saying why.
const verifierCeiling = 520_000

// TestXDPVerifierCost loads the daemon's unbound program with the
// verifier's statistics and fails when the verifier processed more
// instructions than verifierCeiling; it logs the count and the stack
// depth of each function (the kernel's limit: 512 bytes for a call chain).
func TestXDPVerifierCost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("loading the XDP program needs root (CAP_BPF): skipped")
	}
	spec, err := loadQueryd()
	if err != nil {
		t.Fatal(err)
	}
	f := &FastPath{spec: spec}
	if err := f.loadMaps(); err != nil {
		t.Fatal(err)
	}
	defer f.maps.Close()
	ps := spec.Copy()
	for n := range ps.Programs {
		if n != "queryd_xdp" {
			delete(ps.Programs, n)
		}
	}
	var obj struct {
		P *ebpf.Program `ebpf:"queryd_xdp"`
	}
	opts := &ebpf.CollectionOptions{MapReplacements: f.mapsByName, Programs: ebpf.ProgramOptions{LogLevel: ebpf.LogLevelStats}}
	if err := ps.LoadAndAssign(&obj, opts); err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			t.Logf("%+v", ve)
		}
		t.Fatalf("load: %v", err)
	}
	defer obj.P.Close()
	insns, stack, err := verifierStats(obj.P.VerifierLog)
	if err != nil {
		t.Fatalf("%v; the log:\n%s", err, obj.P.VerifierLog)
	}
	t.Logf("the verifier processed %d instructions (ceiling %d); stack depth by function: %s bytes", insns, verifierCeiling, stack)
	if insns > verifierCeiling {
		t.Errorf("the verifier processed %d instructions, above the ceiling of %d: measure the change's cost and raise verifierCeiling with it", insns, verifierCeiling)
	}
}

var (
	processedRe = regexp.MustCompile(`processed (\d+) insns`)
	stackRe     = regexp.MustCompile(`stack depth ([0-9+]+)`)
)

// verifierStats reads the verifier's log of LogLevelStats: the
// instructions it processed and the stack depth line ("8+48+…", one
// figure per function).
func verifierStats(log string) (insns int, stack string, err error) {
	m := processedRe.FindStringSubmatch(log)
	if m == nil {
		return 0, "", errNoStats
	}
	insns, err = strconv.Atoi(m[1])
	if s := stackRe.FindStringSubmatch(log); s != nil {
		stack = s[1]
	}
	return insns, stack, err
}

var errNoStats = errors.New(`no "processed N insns" in the verifier's log`)

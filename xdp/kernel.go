package xdp

import (
	"fmt"
	"strconv"
	"strings"
)

// Kernel is a Linux version, major.minor.
type Kernel struct{ Major, Minor int }

// The kernels the fast path needs ("queryd check" and the start's errors
// say them).
var (
	// KernelXDP loads the XDP program, divert's half included
	// (bpf_xdp_store_bytes, bpf_xdp_get_buff_len).
	KernelXDP = Kernel{5, 18}
	// KernelTCX attaches divert's egress program through tcx; before it,
	// as a filter on a clsact qdisc (clsact_linux.go).
	KernelTCX = Kernel{6, 6}
)

// ParseKernel reads the version at the start of a kernel release, as
// uname -r gives it ("6.1.0-18-amd64").
func ParseKernel(release string) (Kernel, bool) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return Kernel{}, false
	}
	minor := parts[1]
	if i := strings.IndexFunc(minor, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = minor[:i]
	}
	maj, err1 := strconv.Atoi(parts[0])
	mnr, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return Kernel{}, false
	}
	return Kernel{maj, mnr}, true
}

// AtLeast reports whether k is w or later.
func (k Kernel) AtLeast(w Kernel) bool {
	return k.Major > w.Major || k.Major == w.Major && k.Minor >= w.Minor
}

// String is "6.6".
func (k Kernel) String() string { return fmt.Sprintf("%d.%d", k.Major, k.Minor) }

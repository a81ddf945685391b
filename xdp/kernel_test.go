package xdp

import "testing"

// TestParseKernel: the version at the start of uname -r's release, and
// the comparisons `queryd check` makes (Debian 12's 6.1 has no tcx and
// loads the XDP program; Ubuntu 20.04's 5.4 loads neither).
func TestParseKernel(t *testing.T) {
	for _, tc := range []struct {
		release  string
		want     Kernel
		ok       bool
		xdp, tcx bool
	}{
		{"6.1.0-18-amd64", Kernel{6, 1}, true, true, false},
		{"6.18.44-fc-v1294", Kernel{6, 18}, true, true, true},
		{"5.15.0-105-generic", Kernel{5, 15}, true, false, false},
		{"5.18", Kernel{5, 18}, true, true, false},
		{"6.6.0", Kernel{6, 6}, true, true, true},
		{"5.4.0-rc1", Kernel{5, 4}, true, false, false},
		{"7.0", Kernel{7, 0}, true, true, true},
		{"6.10rc2", Kernel{6, 10}, true, true, true},
		{"", Kernel{}, false, false, false},
		{"six.one", Kernel{}, false, false, false},
		{"6", Kernel{}, false, false, false},
		{"6.x", Kernel{}, false, false, false},
	} {
		k, ok := ParseKernel(tc.release)
		if k != tc.want || ok != tc.ok {
			t.Errorf("ParseKernel(%q) = %v, %v; want %v, %v", tc.release, k, ok, tc.want, tc.ok)
		}
		if ok && (k.AtLeast(KernelXDP) != tc.xdp || k.AtLeast(KernelTCX) != tc.tcx) {
			t.Errorf("%q: at least %v %v, at least %v %v; want %v, %v", tc.release, KernelXDP, k.AtLeast(KernelXDP), KernelTCX, k.AtLeast(KernelTCX), tc.xdp, tc.tcx)
		}
	}
}

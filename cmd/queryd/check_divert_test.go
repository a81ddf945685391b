package main

import (
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/xdp"
)

// TestCheckDivertKernel (issue 40): `queryd check` on a host whose kernel
// cannot load the XDP program (Ubuntu 20.04's 5.4, 22.04's 5.15) reports
// divert as an error naming the kernel and relay mode; on Debian 12's 6.1
// (no tcx) a warning that the egress program is a tc filter; on 6.6 and
// later, and without divert, nothing.
func TestCheckDivertKernel(t *testing.T) {
	divert, err := config.Parse([]byte("[listen]\ndivert = [\"198.18.0.1:27015\"]\n[xdp]\ninterfaces = [\"eth0\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := config.Parse([]byte("[listen]\nudp = [\"0.0.0.0:27015\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c        *config.Config
		release  string
		err      []string // each in the one error; nil: no error
		warning  []string // each in the one warning; nil: no warning
		readable bool
	}{
		{divert, "5.15.0-105-generic", []string{"listen.divert: this host runs Linux 5.15 (5.15.0-105-generic)", "needs 5.18 or later", "relay mode"}, nil, true},
		{divert, "5.4.0-42-generic", []string{"Linux 5.4", "relay mode"}, nil, true},
		{divert, "6.1.0-18-amd64", nil, []string{"Linux 6.1, without tcx (6.6)", "tc filter", "pref 20804"}, true},
		{divert, "5.18.0", nil, []string{"without tcx"}, true},
		{divert, "6.6.0", nil, nil, true},
		{divert, "6.18.44-fc-v1294", nil, nil, true},
		{divert, "", nil, nil, false},
		{plain, "5.4.0", nil, nil, true},
	} {
		k, _ := xdp.ParseKernel(tc.release)
		errs, warnings := checkDivertKernel(tc.c, tc.release, k, tc.readable)
		if (len(errs) > 0) != (tc.err != nil) || (len(warnings) > 0) != (tc.warning != nil) || len(errs) > 1 || len(warnings) > 1 {
			t.Errorf("%q: errors %v, warnings %q", tc.release, errs, warnings)
			continue
		}
		for _, want := range tc.err {
			if !strings.Contains(errs[0].Error(), want) {
				t.Errorf("%q: error %q does not say %q", tc.release, errs[0], want)
			}
		}
		for _, want := range tc.warning {
			if !strings.Contains(warnings[0], want) {
				t.Errorf("%q: warning %q does not say %q", tc.release, warnings[0], want)
			}
		}
	}
}

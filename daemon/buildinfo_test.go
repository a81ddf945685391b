package daemon

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/daemon/status"
)

func TestBuildInfoFrom(t *testing.T) {
	tagged := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v1.2.3"}}
	devel := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"},
	}}
	clean := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "false"},
	}}
	for _, c := range []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		want            BuildInfo
	}{
		{"link flags win", "v2.0.0", "fedcba9", tagged, BuildInfo{"v2.0.0", "fedcba9", "go1.26.1"}},
		{"go install @v1.2.3", "dev", "", tagged, BuildInfo{"v1.2.3", "unknown", "go1.26.1"}},
		{"empty version as dev", "", "", tagged, BuildInfo{"v1.2.3", "unknown", "go1.26.1"}},
		{"go build in a modified clone", "dev", "", devel, BuildInfo{"dev", "0123456789abcdef-dirty", "go1.26.1"}},
		{"go build in a clean clone", "dev", "", clean, BuildInfo{"dev", "0123456789abcdef", "go1.26.1"}},
		{"link-time version, stamped commit", "v2.0.0", "", clean, BuildInfo{"v2.0.0", "0123456789abcdef", "go1.26.1"}},
		{"no build info", "", "", nil, BuildInfo{"dev", "unknown", runtime.Version()}},
	} {
		if got := buildInfoFrom(c.version, c.commit, c.bi); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestBuildInfoMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	registerBuildInfo(reg, "v1.2.3", "0123abc")
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || mfs[0].GetName() != "queryd_build_info" || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v", mfs)
	}
	m := mfs[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	want := map[string]string{"version": "v1.2.3", "commit": "0123abc", "goversion": ReadBuildInfo("", "").GoVersion}
	for k, v := range want {
		if labels[k] != v {
			t.Errorf("label %s=%q, want %q (all: %v)", k, labels[k], v, labels)
		}
	}
	if len(labels) != 3 || m.GetGauge().GetValue() != 1 {
		t.Errorf("labels %v, value %v; want 3 labels and 1", labels, m.GetGauge().GetValue())
	}
}

// TestStatusBuild: the status page's build follows ReadBuildInfo's rules,
// so a release's -X main.commit shows there as in `queryd version` and
// queryd_build_info (status.ReadBuild read only what Go stamped: the page
// missed the commit, and showed "dev" where `queryd version` gave v1.2.3).
func TestStatusBuild(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"},
	}}
	tagged := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v1.2.3"}}
	for _, c := range []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		want            status.Build
	}{
		{"release (link flags)", "v2.0.0", "fedcba9", tagged, status.Build{Version: "v2.0.0", Go: "go1.26.1", Module: "v1.2.3", Revision: "fedcba9"}},
		{"go install @v1.2.3", "dev", "", tagged, status.Build{Version: "v1.2.3", Go: "go1.26.1", Module: "v1.2.3"}},
		{"go build in a modified clone", "dev", "", stamped,
			status.Build{Version: "dev", Go: "go1.26.1", Module: "(devel)", Revision: "0123456789abcdef", Time: "2026-11-30T10:00:00Z", Modified: true}},
		{"link-time commit over a stamped one", "v2.0.0", "fedcba9", stamped, status.Build{Version: "v2.0.0", Go: "go1.26.1", Module: "(devel)", Revision: "fedcba9"}},
		{"no build info", "", "", nil, status.Build{Version: "dev", Go: runtime.Version()}},
	} {
		if got := statusBuild(c.version, c.commit, c.bi); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		b := buildInfoFrom(c.version, c.commit, c.bi)
		if got := statusBuild(c.version, c.commit, c.bi); got.Version != b.Version || got.Go != b.GoVersion {
			t.Errorf("%s: the page says %s %s, queryd version %s %s", c.name, got.Version, got.Go, b.Version, b.GoVersion)
		}
	}
}

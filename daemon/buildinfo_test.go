package daemon

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
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

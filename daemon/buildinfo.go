package daemon

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// BuildInfo is what `queryd version` prints and queryd_build_info exports.
type BuildInfo struct {
	Version   string // v1.2.3, a pseudo-version, or "dev"
	Commit    string // the VCS revision, "-dirty" appended for a modified tree; "unknown" without one
	GoVersion string // the Go toolchain that built the binary, such as go1.26.8
}

// ReadBuildInfo returns the running binary's BuildInfo. version and commit
// are the ones set at link time in release builds (-ldflags "-X
// main.version=v1.2.3 -X main.commit=…"); in their absence ("" or "dev")
// it takes what Go recorded in the binary: the main module's version
// (v1.2.3 for `go install …/cmd/queryd@v1.2.3`) and the VCS revision
// (a build in a git clone).
func ReadBuildInfo(version, commit string) BuildInfo {
	bi, _ := debug.ReadBuildInfo()
	return buildInfoFrom(version, commit, bi)
}

// buildInfoFrom is ReadBuildInfo on a given record (nil: none).
func buildInfoFrom(version, commit string, bi *debug.BuildInfo) BuildInfo {
	b := BuildInfo{Version: version, Commit: commit, GoVersion: runtime.Version()}
	if b.Version == "" {
		b.Version = "dev"
	}
	if bi != nil {
		if v := bi.Main.Version; b.Version == "dev" && v != "" && v != "(devel)" {
			b.Version = v
		}
		if bi.GoVersion != "" {
			b.GoVersion = bi.GoVersion
		}
		if b.Commit == "" {
			b.Commit = vcsRevision(bi.Settings)
		}
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

// vcsRevision is the revision Go stamped, "-dirty" appended for a
// modified tree; "" without one.
func vcsRevision(settings []debug.BuildSetting) string {
	var rev, modified string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	return rev
}

// registerBuildInfo exports queryd_build_info{version,commit,goversion} 1.
func registerBuildInfo(reg prometheus.Registerer, version, commit string) {
	b := ReadBuildInfo(version, commit)
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "queryd_build_info",
		Help:        "Always 1; its labels are the version, VCS commit and Go version that built queryd.",
		ConstLabels: prometheus.Labels{"version": b.Version, "commit": b.Commit, "goversion": b.GoVersion},
	})
	g.Set(1)
	reg.MustRegister(g)
}

package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/queryd/queryd/daemon"
)

// version and commit are set at link time in release builds (-ldflags
// "-X main.version=v1.2.3 -X main.commit=…", .goreleaser.yaml); init fills
// in what Go recorded when they are not, so `go install
// …/cmd/queryd@v1.2.3` reports v1.2.3 too (daemon.ReadBuildInfo).
var (
	version = "dev"
	commit  = ""
)

func init() {
	b := daemon.ReadBuildInfo(version, commit)
	version, commit = b.Version, b.Commit
}

// cmdVersion prints one line: the version, the commit and the Go toolchain
// that built the binary, and its platform.
func cmdVersion(stdout io.Writer) int {
	b := daemon.ReadBuildInfo(version, commit)
	fmt.Fprintf(stdout, "queryd %s (commit %s, %s, %s/%s)\n", b.Version, b.Commit, b.GoVersion, runtime.GOOS, runtime.GOARCH)
	return 0
}

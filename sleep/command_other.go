//go:build !unix

package sleep

import "os/exec"

// ownProcessGroup leaves cmd as it is where there are no Unix process
// groups (Windows): its cancellation kills the command's own process
// only, not what it started. Linux is what queryd is tested on
// (docs/deploy.md "Windows and macOS").
func ownProcessGroup(cmd *exec.Cmd) {}

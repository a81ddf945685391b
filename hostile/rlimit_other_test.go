//go:build !linux

package hostile

import "errors"

// setNoFile is Linux-only (prlimit); elsewhere the test skips.
func setNoFile(pid, n int) error { return errors.New("prlimit: Linux only") }

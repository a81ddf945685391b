//go:build unix

package daemon

import (
	"fmt"
	"syscall"
)

// descriptorLimit returns the process's RLIMIT_NOFILE soft limit.
func descriptorLimit() (int, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("RLIMIT_NOFILE: %w", err)
	}
	if lim.Cur > 1<<30 {
		return 1 << 30, nil
	}
	return int(lim.Cur), nil
}

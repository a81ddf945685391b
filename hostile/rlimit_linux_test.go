package hostile

import "golang.org/x/sys/unix"

// setNoFile sets another process's RLIMIT_NOFILE (soft and hard) to n.
func setNoFile(pid, n int) error {
	lim := unix.Rlimit{Cur: uint64(n), Max: uint64(n)}
	return unix.Prlimit(pid, unix.RLIMIT_NOFILE, &lim, nil)
}

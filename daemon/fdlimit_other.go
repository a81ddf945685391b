//go:build !unix

package daemon

// descriptorLimit: outside Unix there is no RLIMIT_NOFILE (Windows sockets
// are handles without a per-process cap), so the caps stay as configured.
func descriptorLimit() (int, error) {
	return 1 << 30, nil
}

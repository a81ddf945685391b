//go:build linux

package xdp

import "golang.org/x/sys/unix"

// HostKernel is the running kernel's release (uname -r) and version; ok
// false where it cannot be read.
func HostKernel() (release string, k Kernel, ok bool) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", Kernel{}, false
	}
	release = unix.ByteSliceToString(u.Release[:])
	k, ok = ParseKernel(release)
	return release, k, ok
}

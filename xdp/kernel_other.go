//go:build !linux

package xdp

// HostKernel is not Linux's: ok false.
func HostKernel() (release string, k Kernel, ok bool) { return "", Kernel{}, false }

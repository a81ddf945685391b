//go:build linux

package responder

import (
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPortZeroNotShared: listeners asked for port 0 each get a port of
// their own, never one another SO_REUSEPORT listener holds (the kernel
// hands a SO_REUSEPORT socket bound to port 0 such a port; two servers of
// a host then answered each other's queries, TestHostMainBecomesHost
// once). In a network namespace of its own whose ephemeral range is four
// ports: four listeners of two workers take the four, a fifth is refused.
func TestPortZeroNotShared(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a network namespace of its own needs root: skipped")
	}
	done := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with the goroutine, in its namespace.
		runtime.LockOSThread()
		done <- portZeroListeners(t)
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// portZeroListeners runs TestPortZeroNotShared on a thread it moves into a
// new network namespace.
func portZeroListeners(t *testing.T) error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return err
	}
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_local_port_range", []byte("40000 40003"), 0o644); err != nil {
		return err
	}
	any4 := netip.MustParseAddrPort("0.0.0.0:0")
	seen := map[uint16]bool{}
	for i := range 4 {
		l, err := listenBatch(any4, SocketConfig{Workers: 2})
		if err != nil {
			return fmt.Errorf("listener %d: %w", i+1, err)
		}
		defer l.close()
		p := l.localAddr().Port()
		if seen[p] {
			t.Errorf("listener %d was given port %d, which another listener holds", i+1, p)
		}
		seen[p] = true
	}
	if l, err := listenBatch(any4, SocketConfig{Workers: 2}); err == nil {
		defer l.close()
		t.Errorf("a fifth listener was given port %d of a range of four, all held", l.localAddr().Port())
	}
	return nil
}

package daemontest

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// BreakListener shuts down, for reading, the listening socket of this
// process that inode names: an accept blocked on it then fails with
// EINVAL, an error no accept loop can wait out (as when a listener breaks
// under a server). A TCP listener also wakes an accept parked in Go's
// poller; a Unix one does not: see BlockListener.
func BreakListener(t testing.TB, inode string) {
	t.Helper()
	syscall.Shutdown(fdOf(t, inode), syscall.SHUT_RD)
}

// BlockListener puts the listening socket inode names in blocking mode, so
// that the next accept waits in the kernel, where a shutdown ends it,
// rather than in Go's poller, which a Unix socket's shutdown does not wake.
func BlockListener(t testing.TB, inode string) {
	t.Helper()
	if err := syscall.SetNonblock(fdOf(t, inode), false); err != nil {
		t.Fatal(err)
	}
}

// fdOf returns this process's descriptor of socket inode.
func fdOf(t testing.TB, inode string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	for _, e := range fds {
		link, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if link == "socket:["+inode+"]" {
			fd, _ := strconv.Atoi(e.Name())
			return fd
		}
	}
	t.Fatalf("no descriptor of this process is socket inode %s", inode)
	return -1
}

// UnixInode returns the inode of the listening Unix socket bound to path.
func UnixInode(t testing.TB, path string) string {
	t.Helper()
	for _, f := range procLines(t, "/proc/net/unix") {
		// Accepted connections show the listener's path too; the listener
		// has the __SO_ACCEPTCON flag (00010000).
		if len(f) >= 8 && f[7] == path && f[3] == "00010000" {
			return f[6]
		}
	}
	t.Fatalf("no Unix socket bound to %s in /proc/net/unix", path)
	return ""
}

// TCPInode returns the inode of the listening IPv4 TCP socket at addr.
func TCPInode(t testing.TB, addr string) string {
	t.Helper()
	ap := netip.MustParseAddrPort(addr)
	ip := ap.Addr().As4()
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], ap.Port())
	for _, f := range procLines(t, "/proc/net/tcp") {
		if len(f) >= 10 && f[1] == want && f[3] == "0A" { // 0A: LISTEN
			return f[9]
		}
	}
	t.Fatalf("no listening TCP socket at %s in /proc/net/tcp", addr)
	return ""
}

func procLines(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("%s: %v", path, err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, strings.Fields(sc.Text()))
	}
	return out
}

//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// The test network: two network namespaces made by the test, joined by a
// veth pair, with addresses from the benchmarking range (RFC 2544) and a
// unique local IPv6 prefix that exist only inside them. Nothing is sent
// anywhere else.
var (
	srvAddr4  = netip.MustParseAddr("198.18.0.1")
	cliAddr4  = netip.MustParseAddr("198.18.0.2")
	cliAddr4b = netip.MustParseAddr("198.18.0.3") // a second client address
	srvAddr6  = netip.MustParseAddr("fd00:5164:7864::1")
	cliAddr6  = netip.MustParseAddr("fd00:5164:7864::2")
)

// testNet is a pair of namespaces and the veth between them.
type testNet struct {
	srvNS, cliNS string // names under /run/netns
	srvIf, cliIf string
	pass         io.Closer // queryd_pass on the client's end
}

// needXDP skips the test with a clear message where it cannot run: not
// root, no ip(8), or a kernel that refuses to load the program.
func needXDP(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("XDP tests need root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN for network namespaces): skipped")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("XDP tests need ip(8) (iproute2) to make network namespaces: skipped")
	}
	if err := loadOnce(); err != nil {
		t.Skipf("the kernel refuses the XDP program: %v: skipped", err)
	}
}

// loadOnce asks the kernel once per test binary whether it takes the
// program (its verifier takes a second or two each time).
var loadOnce = sync.OnceValue(loadUnbound)

func run(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// netSeq numbers the test networks of this process.
var netSeq atomic.Int64

// newTestNet makes the namespaces and the veth pair, addressed, up, with
// queryd_pass on the client's end; t.Cleanup removes them.
func newTestNet(t *testing.T) *testNet {
	t.Helper()
	if testing.Short() {
		t.Skip("network namespaces: skipped under -short")
	}
	id := fmt.Sprintf("%d%d", os.Getpid()%10000, netSeq.Add(1)%1000) // unique among parallel tests
	n := &testNet{srvNS: "qdx-s" + id, cliNS: "qdx-c" + id, srvIf: "qxs" + id, cliIf: "qxc" + id}
	t.Cleanup(n.remove)
	steps := [][]string{
		{"ip", "netns", "add", n.srvNS},
		{"ip", "netns", "add", n.cliNS},
		// neither forwards, whatever the host does (a new namespace takes
		// the host's IPv4 forwarding: on every Docker host, on)
		{"ip", "netns", "exec", n.srvNS, "sysctl", "-qw", "net.ipv4.ip_forward=0", "net.ipv6.conf.all.forwarding=0"},
		{"ip", "netns", "exec", n.cliNS, "sysctl", "-qw", "net.ipv4.ip_forward=0", "net.ipv6.conf.all.forwarding=0"},
		{"ip", "link", "add", n.srvIf, "netns", n.srvNS, "type", "veth", "peer", "name", n.cliIf, "netns", n.cliNS},
		{"ip", "-n", n.srvNS, "addr", "add", srvAddr4.String() + "/24", "dev", n.srvIf},
		{"ip", "-n", n.cliNS, "addr", "add", cliAddr4.String() + "/24", "dev", n.cliIf},
		{"ip", "-n", n.cliNS, "addr", "add", cliAddr4b.String() + "/24", "dev", n.cliIf},
		{"ip", "-n", n.srvNS, "addr", "add", srvAddr6.String() + "/64", "dev", n.srvIf, "nodad"},
		{"ip", "-n", n.cliNS, "addr", "add", cliAddr6.String() + "/64", "dev", n.cliIf, "nodad"},
		{"ip", "-n", n.srvNS, "link", "set", n.srvIf, "up"},
		{"ip", "-n", n.cliNS, "link", "set", n.cliIf, "up"},
		{"ip", "-n", n.srvNS, "link", "set", "lo", "up"},
		{"ip", "-n", n.cliNS, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			t.Fatal(err)
		}
	}
	// A veth receives XDP_TX frames only with a program (or GRO) on it.
	err := inNS(n.cliNS, func() (err error) {
		n.pass, err = AttachPass(n.cliIf)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// remove deletes what newTestNet made (the veth goes with its namespace).
func (n *testNet) remove() {
	if n.pass != nil {
		n.pass.Close()
	}
	run("ip", "netns", "del", n.srvNS)
	run("ip", "netns", "del", n.cliNS)
}

// inNS runs fn on a thread inside network namespace ns: sockets it opens
// and interfaces it looks up are that namespace's.
func inNS(ns string, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- err
			return
		}
		defer unix.Close(orig)
		target, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- err
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			// leave the thread locked: it ends with this goroutine
			done <- errors.Join(ferr, fmt.Errorf("setns back: %w", err))
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}

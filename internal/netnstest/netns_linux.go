//go:build linux

package netnstest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/xdp"
)

// Net is one test network: the namespaces and the veth between them.
type Net struct {
	ServerNS, ClientNS string // names under /run/netns
	ServerIf, ClientIf string // the veth's ends, in ServerNS and ClientNS
	pass               *xdp.Pass
}

var seq atomic.Int32

// New makes the namespaces and the veth pair, addressed and up, with
// Spoofed routed from the server to the client, and the pass-everything
// XDP program on the client's end (a veth receives what its peer's program
// sends with XDP_TX only when it has a program itself). t.Cleanup removes
// it all. It skips the test, saying why, when not root, without ip(8) or
// when the kernel refuses XDP, and under -short (the tests that need it
// are slow); a program the verifier rejects fails it.
func New(t testing.TB) *Net {
	t.Helper()
	if testing.Short() {
		t.Skip("a test network of namespaces and a veth: -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("the XDP test network needs root (network namespaces, CAP_BPF, CAP_NET_ADMIN): skipped")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the XDP test network needs ip(8) (iproute2): skipped")
	}
	id := fmt.Sprintf("%d-%d", os.Getpid()%100000, seq.Add(1))
	n := &Net{ServerNS: "qdn-s" + id, ClientNS: "qdn-c" + id, ServerIf: "qns" + id, ClientIf: "qnc" + id}
	t.Cleanup(n.remove)
	for _, s := range n.steps() {
		if err := run(s...); err != nil {
			t.Fatal(err)
		}
	}
	err := Do(n.ClientNS, func() (err error) {
		n.pass, err = xdp.AttachPass(n.ClientIf)
		return err
	})
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		t.Fatalf("the verifier rejects the XDP program: %+v", ve)
	}
	if err != nil {
		t.Skipf("the kernel refuses XDP on a veth: %v: skipped", err)
	}
	return n
}

// steps are the ip(8) commands that make the network.
func (n *Net) steps() [][]string {
	s, c := n.ServerNS, n.ClientNS
	return [][]string{
		{"ip", "netns", "add", s},
		{"ip", "netns", "add", c},
		// neither forwards, whatever the host does (a new namespace takes
		// the host's IPv4 forwarding: on every Docker host, on)
		{"ip", "netns", "exec", s, "sysctl", "-qw", "net.ipv4.ip_forward=0", "net.ipv6.conf.all.forwarding=0"},
		{"ip", "netns", "exec", c, "sysctl", "-qw", "net.ipv4.ip_forward=0", "net.ipv6.conf.all.forwarding=0"},
		{"ip", "link", "add", n.ServerIf, "netns", s, "type", "veth", "peer", "name", n.ClientIf, "netns", c},
		{"ip", "-n", s, "addr", "add", ServerAddr4.String() + "/24", "dev", n.ServerIf},
		{"ip", "-n", c, "addr", "add", ClientAddr4.String() + "/24", "dev", n.ClientIf},
		{"ip", "-n", c, "addr", "add", ClientAddr4b.String() + "/24", "dev", n.ClientIf},
		{"ip", "-n", s, "addr", "add", ServerAddr6.String() + "/64", "dev", n.ServerIf, "nodad"},
		{"ip", "-n", c, "addr", "add", ClientAddr6.String() + "/64", "dev", n.ClientIf, "nodad"},
		{"ip", "-n", s, "link", "set", n.ServerIf, "up"},
		{"ip", "-n", c, "link", "set", n.ClientIf, "up"},
		{"ip", "-n", s, "link", "set", "lo", "up"},
		{"ip", "-n", c, "link", "set", "lo", "up"},
		{"ip", "-n", s, "route", "add", Spoofed.String(), "via", ClientAddr4.String()},
	}
}

// remove deletes what New made (the veth goes with its namespaces).
func (n *Net) remove() {
	if n.pass != nil {
		n.pass.Close()
	}
	run("ip", "netns", "del", n.ServerNS)
	run("ip", "netns", "del", n.ClientNS)
}

func run(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Do runs fn on a thread inside network namespace ns: the sockets it opens
// and the interfaces it looks up are that namespace's (a socket stays
// there when other threads use it later).
func Do(ns string, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		leave, err := enter(ns)
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		ferr := fn()
		if err := leave(); err != nil {
			// the thread stays locked and ends with this goroutine
			done <- errors.Join(ferr, err)
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}

// Enter moves the calling goroutine, locked to its thread, into network
// namespace ns until the returned function (deferred by the caller, on the
// same goroutine) moves it back. Everything the goroutine does meanwhile
// is in ns: the sockets it opens, and the processes it starts (a child
// inherits its thread's namespace). Subtests run on goroutines of their
// own: each enters for itself. A t.Fatal in between still runs the
// deferred function.
func Enter(t testing.TB, ns string) (leave func()) {
	t.Helper()
	runtime.LockOSThread()
	back, err := enter(ns)
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	return func() {
		if err := back(); err != nil {
			t.Errorf("%v (the thread ends with its goroutine)", err)
			return
		}
		runtime.UnlockOSThread()
	}
}

// enter moves the calling thread into ns and returns how to move it back.
func enter(ns string) (back func() error, err error) {
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open this thread's network namespace: %w", err)
	}
	target, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(orig)
		return nil, fmt.Errorf("open network namespace %s: %w", ns, err)
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		unix.Close(orig)
		return nil, fmt.Errorf("setns %s: %w", ns, err)
	}
	return func() error {
		defer unix.Close(orig)
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("setns back from %s: %w", ns, err)
		}
		return nil
	}, nil
}

// CheckExec fails the test unless a process the calling goroutine starts
// now runs in network namespace ns (ip netns identify names it): call it
// after Enter, before starting clients that must not send from elsewhere.
func CheckExec(t testing.TB, ns string) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "identify").Output()
	if err != nil {
		t.Fatalf("ip netns identify: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != ns {
		t.Fatalf("a child process runs in network namespace %q, want %q", got, ns)
	}
}

// HTTPClient returns a client that connects from inside ns (to its
// loopback, say: the admin endpoint of a daemon running there).
func HTTPClient(ns string, timeout time.Duration) *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := Do(ns, func() (err error) {
			var d net.Dialer
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}

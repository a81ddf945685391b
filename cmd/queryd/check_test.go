package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/responder"
)

// checkConfig writes text as a config in dir and runs queryd check on it
// (as `queryd check FILE`); it returns the exit code and stderr.
func checkConfig(t *testing.T, dir, text string, args ...string) (int, string) {
	t.Helper()
	path := filepath.Join(dir, "check.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "", append(append([]string{"check"}, args...), path)...)
	if (code == 0) != strings.Contains(out, path+": ok") {
		t.Errorf("exit %d but stdout %q", code, out)
	}
	return code, errOut
}

// loopbackConfig is a config on loopback with the feed socket in dir and
// the given [listen] udp and [admin] listen addresses.
func loopbackConfig(dir, udp, admin string) string {
	return fmt.Sprintf("[listen]\nudp = [%q]\n[feed]\nsocket = %q\n[admin]\nlisten = %q\n", udp, filepath.Join(dir, "feed.sock"), admin)
}

// TestCheckFileArgument: `queryd check FILE` is `queryd check -config FILE`;
// two files, or a file besides a different -config, are a usage error.
func TestCheckFileArgument(t *testing.T) {
	dir := testDir(t)
	good := writeConfig(t, dir, "")
	for _, args := range [][]string{{"check", good}, {"check", "-config", good}, {"check", "-config", good, good}} {
		if code, out, errOut := run(t, "", args...); code != 0 || out != good+": ok\n" {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"check"}, {"check", good, good}, {"check", "-config", good, filepath.Join(dir, "other.toml")}} {
		if code, _, errOut := run(t, "", args...); code != 2 || !strings.Contains(errOut, "usage: queryd check") {
			t.Errorf("%v: exit %d, %q; want the usage and 2", args, code, errOut)
		}
	}
}

// TestCheckWarningsBesideErrors: the warnings are shown in the same run as
// the errors (they used to wait until every error was fixed), an unknown key
// gets the nearest known one, and the admin warning names what the status
// page shows.
func TestCheckWarningsBesideErrors(t *testing.T) {
	dir := testDir(t)
	code, errOut := checkConfig(t, dir, loopbackConfig(dir, "127.0.0.1:0", "0.0.0.0:0")+"[server]\nmax_player = 3\n[a2s]\napp_di = 480\n")
	for _, want := range []string{
		"2 error(s)",
		"server.max_player: unknown field (did you mean max_players?)",
		"a2s.app_di: unknown key (did you mean app_id?)",
		"warning: admin.listen: 0.0.0.0:0 is not a loopback address: the status page (player names, client addresses)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("lacks %q", want)
		}
	}
	if code != 1 || t.Failed() {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
}

// TestCheckUndecodable: a config refused before it is decoded (nested too
// deep, a syntax error at a key) gets its error and exit 1; queryd check
// used to panic on the config it did not have.
func TestCheckUndecodable(t *testing.T) {
	dir := testDir(t)
	for text, want := range map[string]string{
		"[server]\nx = " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n": "nested deeper than 32 levels",
		"[listen]\nudp = [\"127.0.0.1:1\"\n":                                        "1 error(s)",
	} {
		code, errOut := checkConfig(t, dir, text)
		if code != 1 || !strings.Contains(errOut, want) || strings.Contains(errOut, "panic") {
			t.Errorf("exit %d, stderr:\n%s\nwant 1 and %q", code, errOut, want)
		}
	}
}

// TestCheckLocal: queryd check refuses configs this host cannot start (it
// said ok to each before): the socket's folder missing, another program
// serving the socket, a UDP or admin address another process holds; it
// warns about an [xdp] interface that does not exist (the daemon starts
// without the fast path) and a /run folder systemd makes at start.
func TestCheckLocal(t *testing.T) {
	t.Parallel() // waits on timeouts and processes, not on the CPU
	dir := testDir(t)
	held, heldTCP := holdAddrs(t)
	free := "127.0.0.1:0"

	for _, c := range []struct {
		name, text string
		code       int
		want       string
	}{
		{"good", loopbackConfig(dir, free, free), 0, ""},
		{"UDP address held", loopbackConfig(dir, held, free), 1, "listen.udp[0]: " + held + ": in use by another process: queryd cannot start"},
		{"admin address held", loopbackConfig(dir, free, heldTCP), 1, "admin.listen: " + heldTCP + ": in use by another process"},
		{"address not on this host", loopbackConfig(dir, "192.0.2.1:27015", free), 1, "listen.udp[0]: 192.0.2.1:27015: not an address of this host"},
		{"socket folder missing", "[listen]\nudp = [\"127.0.0.1:0\"]\n[admin]\nlisten = \"\"\n[feed]\nsocket = \"" + filepath.Join(dir, "nope", "feed.sock") + "\"\n", 1,
			"feed.socket: the folder " + filepath.Join(dir, "nope") + " does not exist"},
		{"socket a regular file", "[listen]\nudp = [\"127.0.0.1:0\"]\n[admin]\nlisten = \"\"\n[feed]\nsocket = \"" + filepath.Join(dir, "check.toml") + "\"\n", 1,
			"a regular file is in the way"},
		{"a /run folder", "[listen]\nudp = [\"127.0.0.1:0\"]\n[admin]\nlisten = \"\"\n[feed]\nsocket = \"/run/queryd-check-test-nosuch/feed.sock\"\n", 0,
			"warning: feed.socket: the folder /run/queryd-check-test-nosuch does not exist here (yet): systemd's RuntimeDirectory= makes it at start, a container has it"},
		{"xdp interface missing", loopbackConfig(dir, free, free) + "[xdp]\ninterfaces = [\"nosuchif0\"]\n", 0,
			"warning: xdp.interfaces[0]: no interface \"nosuchif0\" on this host: queryd starts without the XDP fast path"},
		{"errors and findings at once", loopbackConfig(dir, held, free) + "[limits]\nper_ip_rat = 1\n", 1, "2 error(s)"},
	} {
		code, errOut := checkConfig(t, dir, c.text)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d (want %d), stderr:\n%s\nwant %q", c.name, code, c.code, errOut, c.want)
		}
		if c.code == 0 && strings.Contains(errOut, "error(s)") {
			t.Errorf("%s: errors on a config that starts:\n%s", c.name, errOut)
		}
		if code, _ := checkConfig(t, dir, c.text, "-local=false"); c.want != "2 error(s)" && code != 0 {
			t.Errorf("%s: -local=false: exit %d", c.name, code)
		}
	}

	// Another program serving the socket path: the daemon would refuse it.
	sock := filepath.Join(dir, "feed.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	code, errOut := checkConfig(t, dir, loopbackConfig(dir, free, free))
	ln.Close()
	if code != 1 || !strings.Contains(errOut, "feed.socket: feed socket "+sock+": another process is serving it") {
		t.Errorf("socket served by another program: exit %d\n%s", code, errOut)
	}
}

// TestCheckBesideRunningDaemon: `systemctl reload` runs queryd check while
// the daemon holds its addresses and socket: a running queryd answering on
// the feed socket is recognised, and its addresses are not reported as in
// use.
func TestCheckBesideRunningDaemon(t *testing.T) {
	dir := testDir(t)
	// Fixed ports (the config is checked as it is): two the kernel just gave.
	var ports []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, ln.Addr().String())
		ln.Close()
	}
	text := strings.Replace(daemontest.Base(dir), `udp = ["127.0.0.1:0"]`, `udp = ["`+ports[0]+`"]`, 1)
	text = strings.Replace(text, `listen = "127.0.0.1:0"`, `listen = "`+ports[1]+`"`, 1)
	path := filepath.Join(dir, "running.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	startTestDaemon(t, path)
	code, out, errOut := run(t, "", "check", path)
	if code != 0 || !strings.Contains(out, "ok") || !strings.Contains(errOut, "note: a running queryd answers on the feed socket") {
		t.Fatalf("beside the running daemon: exit %d\n%s%s", code, out, errOut)
	}
}

// With [listen] socket = "uring", queryd check warns when this host cannot
// run io_uring (the daemon would serve on the batch layer) and is silent
// when it can or when another layer is asked for.
func TestCheckURingWarning(t *testing.T) {
	refused := func() error { return errors.New("operation not permitted") }
	fine := func() error { return nil }
	uring := &config.Config{Listen: config.Listen{Socket: responder.SocketUring}}
	batch := &config.Config{Listen: config.Listen{Socket: responder.SocketBatch}}
	if w := uringWarnings(uring, refused); len(w) != 1 || !strings.Contains(w[0], `listen.socket: "uring" cannot run here (operation not permitted): the batch layer would serve`) {
		t.Errorf("refused: %q", w)
	}
	if w := uringWarnings(uring, fine); len(w) != 0 {
		t.Errorf("available: %q", w)
	}
	if w := uringWarnings(batch, refused); len(w) != 0 {
		t.Errorf("batch layer: %q", w)
	}
	// The whole command, on this host.
	dir := testDir(t)
	text := strings.Replace(loopbackConfig(dir, "127.0.0.1:0", "127.0.0.1:0"), "[listen]\n", "[listen]\nsocket = \"uring\"\n", 1)
	code, errOut := checkConfig(t, dir, text)
	why := responder.URingAvailable()
	if code != 0 || (why == nil) == strings.Contains(errOut, `"uring" cannot run here`) {
		t.Errorf("queryd check with socket = \"uring\" (io_uring here: %v): exit %d\n%s", why, code, errOut)
	}
}

// holdAddrs holds a loopback UDP and a TCP address for the test, as
// another process would, and returns them.
func holdAddrs(t *testing.T) (udp, tcp string) {
	t.Helper()
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return u.LocalAddr().String(), l.Addr().String()
}

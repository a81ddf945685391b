package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeCheckedHost writes a main file (queryd.toml) and files under dir; it
// returns the main file's path.
func writeCheckedHost(t *testing.T, dir, main string, files map[string]string) string {
	t.Helper()
	files["queryd.toml"] = main
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "queryd.toml")
}

// checkedServer is a server file on udp with its feed socket in dir.
func checkedServer(dir, name, udp string) string {
	return fmt.Sprintf("[listen]\nudp = [%q]\n[feed]\nsocket = %q\n", udp, filepath.Join(dir, name+".sock"))
}

// freeWildcardPort returns a UDP port no one held on any address a moment ago.
func freeWildcardPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// TestCheckHostExample: queryd check of examples/host checks the main file
// and its three server files, and names the servers.
func TestCheckHostExample(t *testing.T) {
	path := filepath.Join("..", "..", "examples", "host", "queryd.toml")
	code, out, errOut := run(t, "", "check", "-local=false", path)
	if code != 0 || out != path+": ok (3 server(s): alpha, bravo, charlie)\n" || errOut != "" {
		t.Fatalf("exit %d, %q %q", code, out, errOut)
	}
}

// TestCheckHostErrors: queryd check of a host reports every file's errors
// in one run, each line starting with its file (the main file's, a
// host-wide table in a server file, a bad name, a syntax error, overlaps
// with wildcards and IPv6, an address another process holds), the
// warnings with their files, and exits 1; the good server is checked too.
func TestCheckHostErrors(t *testing.T) {
	dir := testDir(t)
	busy, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	p1, p2 := freeWildcardPort(t), freeWildcardPort(t)
	main := "[admin]\nlisten = \"127.0.0.1:0\"\n[log]\nlevel = \"loud\"\n[servers]\ninclude = [\"s/*.toml\"]\n"
	path := writeCheckedHost(t, dir, main, map[string]string{
		"s/a.toml":       checkedServer(dir, "a", fmt.Sprintf("0.0.0.0:%d", p1)),
		"s/x.toml":       checkedServer(dir, "x", "127.0.0.1:0") + "[admin]\nlisten = \"0.0.0.0:9273\"\n",
		"s/b.toml":       checkedServer(dir, "b", fmt.Sprintf("127.0.0.1:%d", p1)),
		"s/c.toml":       checkedServer(dir, "c", fmt.Sprintf("[::]:%d", p2)),
		"s/d.toml":       checkedServer(dir, "d", fmt.Sprintf("[::1]:%d", p2)),
		"s/e.toml":       "[listen\n",
		"s/main.toml":    checkedServer(dir, "m", "127.0.0.1:0"),
		"s/busy.toml":    checkedServer(dir, "busy", busy.LocalAddr().String()),
		"s/warned.toml":  checkedServer(dir, "warned", "127.0.0.1:0") + "[relay]\nqueue = 1\n",
		"s/ok.toml":      checkedServer(dir, "ok", "127.0.0.1:0"),
		"s/ok-sock.toml": checkedServer(dir, "ok", "127.0.0.1:0"),
	})
	code, out, errOut := run(t, "", "check", path)
	s := func(name string) string { return filepath.Join(dir, "s", name) }
	for _, want := range []string{
		path + ": 8 error(s) in 8 of 12 file(s)\n",
		"  " + path + ": log.level: want debug, info, warn or error",
		"  " + s("x.toml") + ": admin: [admin] is host-wide: allowed only in the main file " + path,
		"  " + s("b.toml") + fmt.Sprintf(": listen.udp[0]: udp 127.0.0.1:%d overlaps udp 0.0.0.0:%d of listen.udp[0] in ", p1, p1) + s("a.toml"),
		"  " + s("busy.toml") + ": listen.udp[0]: " + busy.LocalAddr().String() + ": in use by another process",
		"  " + s("d.toml") + fmt.Sprintf(": listen.udp[0]: udp [::1]:%d overlaps udp [::]:%d of listen.udp[0] in ", p2, p2) + s("c.toml"),
		"  " + s("e.toml") + ": TOML syntax: line 2",
		"  " + s("main.toml") + `: the server name "main" is the main file's`,
		"  " + s("ok.toml") + ": feed.socket: the feed socket " + filepath.Join(dir, "ok.sock") + " is " + s("ok-sock.toml") + "'s too",
		"warning: " + s("warned.toml") + ": relay.queue:",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("lacks %q", want)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if !strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(line, "  "), "warning: "), dir) {
			t.Errorf("line %q does not start with its file", line)
		}
	}
	if code != 1 || out != "" || t.Failed() {
		t.Fatalf("exit %d, stdout %q:\n%s", code, out, errOut)
	}
}

// TestCheckHostMain: a host whose globs match nothing is fine; the main
// file's server is checked like an included one (an address in use), and
// the host-wide [admin] listen once, on the main file.
func TestCheckHostMain(t *testing.T) {
	dir := testDir(t)
	path := writeCheckedHost(t, dir, "[admin]\nlisten = \"127.0.0.1:0\"\n[servers]\ninclude = [\"s/*.toml\"]\n", map[string]string{})
	if code, out, errOut := run(t, "", "check", path); code != 0 || out != path+": ok (no server file yet)\n" {
		t.Errorf("no server: exit %d, %q %q", code, out, errOut)
	}
	busy, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	admin, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	main := fmt.Sprintf("[admin]\nlisten = %q\n[servers]\ninclude = [\"s/*.toml\"]\n", admin.Addr()) + checkedServer(dir, "main", busy.LocalAddr().String())
	path = writeCheckedHost(t, dir, main, map[string]string{"s/a.toml": checkedServer(dir, "a", "127.0.0.1:0")})
	code, out, errOut := run(t, "", "check", path)
	for _, want := range []string{
		path + ": 2 error(s) in 1 of 2 file(s)\n",
		"  " + path + ": admin.listen: " + admin.Addr().String() + ": in use by another process",
		"  " + path + ": listen.udp[0]: " + busy.LocalAddr().String() + ": in use by another process",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("lacks %q", want)
		}
	}
	if code != 1 || t.Failed() {
		t.Fatalf("exit %d, stdout %q:\n%s", code, out, errOut)
	}
	if code, out, _ := run(t, "", "check", "-local=false", path); code != 0 || out != path+": ok (2 server(s): main, a)\n" {
		t.Errorf("-local=false: exit %d, %q", code, out)
	}
}

// TestCheckHostBinary: the built queryd (as CI and the packages build it)
// checks a host in one run: exit 0 and the servers for examples/host,
// exit 1 and every file's error, each line starting with its file, for a
// host with a broken server file and an overlap.
func TestCheckHostBinary(t *testing.T) {
	t.Parallel() // waits on timeouts and processes, not on the CPU
	if testing.Short() {
		t.Skip("builds queryd")
	}
	bin := buildStatic(t)
	example := filepath.Join("..", "..", "examples", "host", "queryd.toml")
	out, err := exec.Command(bin, "check", "-local=false", "-config", example).CombinedOutput()
	if err != nil || string(out) != example+": ok (3 server(s): alpha, bravo, charlie)\n" {
		t.Fatalf("examples/host: %v\n%s", err, out)
	}
	dir := testDir(t)
	path := writeCheckedHost(t, dir, "[servers]\ninclude = [\"s/*.toml\"]\n", map[string]string{
		"s/a.toml": checkedServer(dir, "a", "[::]:27115"),
		"s/b.toml": checkedServer(dir, "b", "198.18.0.1:27115"),
		"s/c.toml": checkedServer(dir, "c", "127.0.0.1:27116") + "[xdp]\ninterfaces = [\"eth0\"]\n",
	})
	var stdout, stderr strings.Builder
	cmd := exec.Command(bin, "check", "-local=false", path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || stdout.Len() != 0 {
		t.Fatalf("exit %v, stdout %q", err, stdout.String())
	}
	want := path + ": 2 error(s) in 2 of 4 file(s)\n" +
		"  " + filepath.Join(dir, "s", "b.toml") + ": listen.udp[0]: udp 198.18.0.1:27115 overlaps udp [::]:27115 of listen.udp[0] in " + filepath.Join(dir, "s", "a.toml") + " (server \"a\"): two servers cannot listen on one address\n" +
		"  " + filepath.Join(dir, "s", "c.toml") + ": xdp: [xdp] is host-wide: allowed only in the main file " + path + ", not in a server file\n"
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPushConfigServer: `queryd push -config FILE -server NAME` feeds the
// socket the daemon made for that server of a host whose server files set
// no [feed] socket, with XDG_RUNTIME_DIR unset (examples/host's README
// used to spell the socket as "$XDG_RUNTIME_DIR/queryd/alpha.sock", which
// is "/queryd/alpha.sock" then). Without -server a host of several servers
// is a clear error naming them; a misspelt name gets the nearest.
func TestPushConfigServer(t *testing.T) {
	tmp := testDir(t)
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", tmp)
	dir := testDir(t)
	if err := os.Mkdir(filepath.Join(dir, "servers.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alpha", "bravo"} {
		file := strings.Replace(serverFile(dir, name, ""), "socket = ", "# socket = ", 1)
		if err := os.WriteFile(filepath.Join(dir, "servers.d", name+".toml"), []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "queryd.toml")
	if err := os.WriteFile(path, []byte(hostMain), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startHost(t, path)
	if got, want := d.Server("alpha").FeedPath(), filepath.Join(tmp, "queryd-"+strconv.Itoa(os.Getuid()), "alpha.sock"); got != want {
		t.Fatalf("alpha's socket is %s, want %s", got, want)
	}

	code, out, errOut := run(t, `{"op":"replace","state":{"name":"Alpha Arena"}}`+"\n", "push", "-config", path, "-server", "alpha")
	if code != 0 || !strings.Contains(out, `{"ok":true,"version":`) {
		t.Fatalf("push -config -server alpha: exit %d\n%s%s", code, out, errOut)
	}
	wantName(t, d, "alpha", "Alpha Arena")
	wantName(t, d, "bravo", "Server bravo")

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-config", path}, 1, "2 servers (alpha, bravo): name one with -server"},
		{[]string{"-config", path, "-server", "alpah"}, 1, `no server "alpah" (it has alpha, bravo) (did you mean alpha?)`},
		{[]string{"-server", "alpha"}, 2, "usage:"},
		{[]string{"-config", path, "-socket", "x"}, 2, "usage:"},
	} {
		code, _, errOut := run(t, `{"op":"ping"}`+"\n", append([]string{"push"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("push %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.want)
		}
	}
}

// TestPushConfigOneServer: with -config of a one-server config, push uses
// its [feed] socket without -server.
func TestPushConfigOneServer(t *testing.T) {
	dir := testDir(t)
	path := writeConfig(t, dir, "")
	d := startTestDaemon(t, path)
	code, out, errOut := run(t, `{"op":"replace","state":{"name":"one"}}`+"\n", "push", "-config", path)
	if code != 0 || !strings.Contains(out, `"ok":true`) {
		t.Fatalf("push -config: exit %d\n%s%s", code, out, errOut)
	}
	if sum, err := askProto(t, "a2s", d.UDP().String(), 3*time.Second); err != nil || sum.Name != "one" {
		t.Errorf("A2S after push -config: %+v, %v", sum, err)
	}
}

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckErrorLines: every error queryd check prints ends in its line:
// the file's own (a bad value, an unknown key) and those only this host
// shows (an address in use), for one config and for a host's main and
// server files. Before, only the decoder's type errors had a line.
func TestCheckErrorLines(t *testing.T) {
	dir := testDir(t)
	held, heldTCP := holdAddrs(t)

	// loopbackConfig: udp on line 2, admin listen on line 6.
	code, errOut := checkConfig(t, dir, loopbackConfig(dir, held, "127.0.0.1:0")+"\n[limits]\nper_ip_rat = 1\n")
	for _, want := range []string{
		"  listen.udp[0]: " + held + ": in use by another process: queryd cannot start (line 2)\n",
		"  limits.per_ip_rat: unknown key (did you mean per_ip_rate?) (line 9)\n",
	} {
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, stderr:\n%s\nwant %q", code, errOut, want)
		}
	}

	hdir := testDir(t)
	path := writeCheckedHost(t, hdir, "# the host\n[admin]\nlisten = \""+heldTCP+"\"\n[servers]\ninclude = [\"servers.d/*.toml\"]\n", map[string]string{
		"servers.d/a.toml": checkedServer(hdir, "a", held),
	})
	code, out, errOut := run(t, "", "check", path)
	for _, want := range []string{
		path + ": admin.listen: " + heldTCP + ": in use by another process: queryd cannot start (line 3)\n",
		filepath.Join(hdir, "servers.d", "a.toml") + ": listen.udp[0]: " + held + ": in use by another process: queryd cannot start (line 2)\n",
	} {
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("host: exit %d, stderr:\n%s%s\nwant %q", code, out, errOut, want)
		}
	}
}

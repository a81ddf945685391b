package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// queryd check refuses an [upstream] protocol no registered module polls
// in, naming those that do (every module of the registration list), and
// accepts each of them.
func TestCheckUpstreamProtocol(t *testing.T) {
	dir := testDir(t)
	path := filepath.Join(dir, "up.toml")
	os.WriteFile(path, []byte("[upstream]\nprotocol = \"gopher\"\naddress = \"127.0.0.1:27016\"\n"), 0o600)
	code, _, errOut := run(t, "", "check", "-config", path)
	want := `upstream.protocol: "gopher": no module is named so; want one of ["a2s" "gamespy4" "sagl" "quake3" "bedrock" "sqp"]`
	if code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d, want 1 and %q:\n%s", code, want, errOut)
	}
	for _, m := range modules {
		os.WriteFile(path, []byte("[upstream]\nprotocol = \""+m.Name()+"\"\naddress = \"127.0.0.1:27016\"\n"), 0o600)
		if code, out, errOut := run(t, "", "check", "-config", path); code != 0 || !strings.Contains(out, "ok") {
			t.Errorf("protocol %q: exit %d %q\n%s", m.Name(), code, out, errOut)
		}
	}
}

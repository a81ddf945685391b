package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := dispatch(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersionAndHelp(t *testing.T) {
	if code, out, _ := run(t, "", "version"); code != 0 || !strings.HasPrefix(out, "queryd ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, out, _ := run(t, "", "help"); code != 0 || !strings.Contains(out, "queryd query") {
		t.Fatalf("help: %d %q", code, out)
	}
}

func TestCheck(t *testing.T) {
	dir := testDir(t)
	good := writeConfig(t, dir, "")
	if code, out, _ := run(t, "", "check", "-config", good); code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("good config: %d %q", code, out)
	}
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[listen]\nudp = [\"x\"]\n[a2s]\nprotocol = 300\nwhat = 1\n"), 0o600)
	code, _, errOut := run(t, "", "check", "-config", bad)
	if code != 1 {
		t.Fatalf("bad config exit %d", code)
	}
	for _, k := range []string{"listen.udp[0]", "a2s.protocol", "a2s.what", "3 error(s)"} {
		if !strings.Contains(errOut, k) {
			t.Errorf("check output lacks %q:\n%s", k, errOut)
		}
	}
	if code, _, _ := run(t, "", "check"); code != 2 {
		t.Fatal("check without -config must be a usage error")
	}
	if code, _, errOut := run(t, "", "check", "-config", filepath.Join(dir, "missing.toml")); code != 1 || !strings.Contains(errOut, "no such file") {
		t.Fatalf("missing file: %d %s", code, errOut)
	}
}

// queryd check refuses a relay pointing at queryd itself, by address or by
// a name resolving to it, with the key; and warns about the retired queue key.
func TestCheckRelayLoop(t *testing.T) {
	dir := testDir(t)
	path := filepath.Join(dir, "loop.toml")
	for _, up := range []string{"127.0.0.1:27960", "localhost:27960"} {
		os.WriteFile(path, []byte("[listen]\nudp = [\"127.0.0.1:27960\"]\n[relay]\nupstream = \""+up+"\"\n"), 0o600)
		code, _, errOut := run(t, "", "check", "-config", path)
		if code != 1 || !strings.Contains(errOut, "relay.upstream: ") || !strings.Contains(errOut, "loop") {
			t.Errorf("upstream %s on queryd's own address: exit %d\n%s", up, code, errOut)
		}
	}
	os.WriteFile(path, []byte("[listen]\nudp = [\"127.0.0.1:27960\"]\n[relay]\nupstream = \"localhost:27961\"\nqueue = 64\n"), 0o600)
	code, out, errOut := run(t, "", "check", "-config", path)
	if code != 0 || !strings.Contains(out, "ok") || !strings.Contains(errOut, "warning: relay.queue") {
		t.Errorf("a good relay with the retired queue key: exit %d\n%s%s", code, out, errOut)
	}
}

// queryd check refuses an [upstream] address that is queryd itself, by
// address or by a name resolving to it, with the key, and accepts a good one.
func TestCheckUpstreamLoop(t *testing.T) {
	dir := testDir(t)
	path := filepath.Join(dir, "up.toml")
	for _, up := range []string{"127.0.0.1:27960", "localhost:27960"} {
		os.WriteFile(path, []byte("[listen]\nudp = [\"127.0.0.1:27960\"]\n[upstream]\nprotocol = \"a2s\"\naddress = \""+up+"\"\n"), 0o600)
		code, _, errOut := run(t, "", "check", "-config", path)
		if code != 1 || !strings.Contains(errOut, "upstream.address: ") || !strings.Contains(errOut, "queryd itself") {
			t.Errorf("upstream %s on queryd's own address: exit %d\n%s", up, code, errOut)
		}
	}
	os.WriteFile(path, []byte("[listen]\nudp = [\"127.0.0.1:27960\"]\n[upstream]\nprotocol = \"quake3\"\naddress = \"localhost:27961\"\n"), 0o600)
	if code, out, errOut := run(t, "", "check", "-config", path); code != 0 || !strings.Contains(out, "ok") {
		t.Errorf("a good upstream: exit %d\n%s%s", code, out, errOut)
	}
}

func TestPushAndQuery(t *testing.T) {
	dir := testDir(t)
	d := startTestDaemon(t, writeConfig(t, dir, ""))
	sock := filepath.Join(dir, "feed.sock")
	in := `{"op":"replace","state":{"name":"pushed","players":{"1":{"name":"Zoë","score":2}}}}
{"op":"ping"}
`
	code, out, errOut := run(t, in, "push", "-socket", sock)
	if code != 0 || strings.Count(out, `"ok":true`) != 2 {
		t.Fatalf("push: %d %q %q", code, out, errOut)
	}
	code, out, errOut = run(t, `{"op":"patch","state":{"max_players":-4}}`+"\n"+`{"op":"ping"}`+"\n", "push", "-socket", sock)
	if code != 1 || strings.Count(out, "\n") != 1 || !strings.Contains(errOut, "line 1 rejected") {
		t.Fatalf("push must stop at the first rejected line: %d %q %q", code, out, errOut)
	}

	addr := d.UDP().String()
	code, out, errOut = run(t, "", "query", "-proto", "a2s", "-timeout", "2s", addr)
	if code != 0 {
		t.Fatalf("query: %d %s", code, errOut)
	}
	var res struct {
		Info struct {
			Name    string
			Players int
		}
		Players []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Info.Name != "pushed" || res.Players[0].Name != "Zoë" {
		t.Fatalf("query output %q: %v", out, err)
	}
	code, out, _ = run(t, "", "query", "-timeout", "1s", addr)
	if code != 0 || !strings.Contains(out, `"a2s"`) {
		t.Fatalf("query auto: %d %s", code, out)
	}
	if code, _, _ := run(t, "", "query", "-proto", "nope", addr); code != 2 {
		t.Fatal("unknown protocol must be a usage error")
	}
	d.Stop()
	if code, _, errOut := run(t, "", "query", "-proto", "a2s", "-timeout", "300ms", addr); code != 1 || errOut == "" {
		t.Fatalf("query of a dead server: %d %q", code, errOut)
	}
}

package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// unitKeys returns a systemd unit file's directives (key → values in order),
// comments and section headers left out.
func unitKeys(text string) map[string][]string {
	keys := map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "[") {
			continue
		}
		if k, v, ok := strings.Cut(l, "="); ok {
			keys[k] = append(keys[k], v)
		}
	}
	return keys
}

// TestSystemdTemplateUnit: queryd@.service is queryd.service for
// /etc/queryd/%i.toml with the runtime directory /run/queryd-%i, directive
// for directive (the same sandbox, the same reload check), and the packages'
// drop-ins for the two differ the same way. deploy/ci/systemd.sh runs two
// instances under systemd.
func TestSystemdTemplateUnit(t *testing.T) {
	for _, pair := range [][2]string{
		{"deploy/systemd/queryd.service", "deploy/systemd/queryd@.service"},
		{"deploy/package/queryd.service.conf", "deploy/package/queryd@.service.conf"},
	} {
		single, template := unitKeys(readRepoFile(t, pair[0])), unitKeys(readRepoFile(t, pair[1]))
		want := map[string][]string{}
		for k, vs := range single {
			for _, v := range vs {
				v = strings.ReplaceAll(v, "/etc/queryd/queryd.toml", "/etc/queryd/%i.toml")
				if k == "RuntimeDirectory" {
					v = "queryd-%i"
				}
				want[k] = append(want[k], v)
			}
		}
		for _, k := range []string{"Description", "Documentation"} {
			if len(template[k]) > 1 {
				t.Errorf("%s: %d %s= lines", pair[1], len(template[k]), k)
			}
			delete(want, k)
			delete(template, k)
		}
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if !slices.Equal(template[k], want[k]) {
				t.Errorf("%s: %s=%q, want %q (as %s has it, for %%i)", pair[1], k, template[k], want[k], pair[0])
			}
		}
		for _, k := range slices.Sorted(maps.Keys(template)) {
			if _, ok := want[k]; !ok {
				t.Errorf("%s has %s=%q, which %s does not", pair[1], k, template[k], pair[0])
			}
		}
	}
	if !strings.Contains(readRepoFile(t, "deploy/systemd/queryd@.service"), "Description=queryd game-server query responder for %i") {
		t.Error("queryd@.service's Description does not name the instance (%i)")
	}
	rel := readRepoFile(t, ".goreleaser.yaml")
	for _, f := range []string{"deploy/systemd/queryd@.service", "deploy/package/queryd@.service.conf",
		"/usr/lib/systemd/system/queryd@.service", "/usr/lib/systemd/system/queryd@.service.d/package.conf"} {
		if !strings.Contains(rel, f) {
			t.Errorf(".goreleaser.yaml does not name %s: the packages lack the template unit", f)
		}
	}
}

// TestHostDeployConfig: deploy/kubernetes/host's main file, with the
// ConfigMap's folder pointed at a copy of servers/, passes `queryd check`
// with the server files it includes; a typo planted in lobby.toml's copy
// then fails the check naming that file (so it was included). Before host
// mode's [servers] table existed it could not: skipped then, saying so.
func TestHostDeployConfig(t *testing.T) {
	main := readRepoFile(t, "deploy/kubernetes/host/queryd.toml")
	lobby := readRepoFile(t, "deploy/kubernetes/host/servers/lobby.toml")
	const folder = `"/etc/queryd-servers.d/*.toml"`
	if !strings.Contains(main, folder) {
		t.Fatal("deploy/kubernetes/host/queryd.toml does not include " + folder + " (the ConfigMap's folder in daemonset.yaml)")
	}
	check := func(lobby string) (int, string) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "servers"), 0o755); err != nil {
			t.Fatal(err)
		}
		m := strings.Replace(main, folder, strconv.Quote(filepath.Join(dir, "servers", "*.toml")), 1)
		if err := os.WriteFile(filepath.Join(dir, "queryd.toml"), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "servers", "lobby.toml"), []byte(lobby), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run(t, "", "check", "-local=false", "-config", filepath.Join(dir, "queryd.toml"))
		return code, out + errOut
	}
	code, out := check(lobby)
	if code != 0 && strings.Contains(out, "servers: unknown table") {
		t.Skip("config has no [servers] table yet (host mode): " + strings.TrimSpace(out))
	}
	if code != 0 {
		t.Fatalf("queryd check deploy/kubernetes/host/queryd.toml with servers/: exit %d\n%s", code, out)
	}
	if code, out := check(lobby + "\n[server]\nnmae = \"typo\"\n"); code == 0 || !strings.Contains(out, "lobby.toml") {
		t.Errorf("a typo in the included lobby.toml: exit %d, want a failure naming lobby.toml:\n%s", code, out)
	}
}

// TestHostAgonesDeployConfig: the server file the host-mode Agones Fleet's
// pods write (deploy/kubernetes/host/mygame-agones.yaml's register
// container, its $POD_NAME filled in) passes `queryd check` beside the
// host's main file and lobby.toml: [agones] reads the SDK server at the
// port the Fleet gives it, and its [listen] and feed socket are its own.
func TestHostAgonesDeployConfig(t *testing.T) {
	fleet := readRepoFile(t, "deploy/kubernetes/host/mygame-agones.yaml")
	_, rest, ok := strings.Cut(fleet, `cat >"$f.new" <<EOF`+"\n")
	body, _, ok2 := strings.Cut(rest, "\n                  EOF\n")
	if !ok || !ok2 {
		t.Fatal("mygame-agones.yaml: no server file written by a heredoc")
	}
	var file strings.Builder
	for _, l := range strings.Split(body, "\n") {
		file.WriteString(strings.TrimPrefix(l, "                  ") + "\n")
	}
	server := strings.ReplaceAll(file.String(), "$POD_NAME", "mygame-agones-x7k2p")
	if !strings.Contains(server, "[agones]\nsdk = \"localhost:9400\"") || !strings.Contains(fleet, "httpPort: 9400") {
		t.Errorf("the server file does not read the SDK server at the Fleet's sdkServer httpPort (9400):\n%s", server)
	}
	main := readRepoFile(t, "deploy/kubernetes/host/queryd.toml")
	dir := t.TempDir()
	for _, d := range []string{"etc", "pods"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := strings.Replace(main, `"/etc/queryd-servers.d/*.toml"`, strconv.Quote(filepath.Join(dir, "etc", "*.toml")), 1)
	m = strings.Replace(m, `"/var/lib/queryd/servers.d/*.toml"`, strconv.Quote(filepath.Join(dir, "pods", "*.toml")), 1)
	files := map[string]string{
		"queryd.toml":                   m,
		"etc/lobby.toml":                readRepoFile(t, "deploy/kubernetes/host/servers/lobby.toml"),
		"pods/mygame-agones-x7k2p.toml": server,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := run(t, "", "check", "-local=false", "-config", filepath.Join(dir, "queryd.toml"))
	if code != 0 || strings.Contains(errOut, "mygame-agones") {
		t.Fatalf("queryd check with the Fleet's server file: exit %d\n%s%s\n%s", code, out, errOut, server)
	}
}

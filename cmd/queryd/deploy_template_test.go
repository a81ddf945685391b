package main

import (
	"maps"
	"slices"
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

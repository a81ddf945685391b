package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/internal/udptest"
)

// The deploy/ files cannot run here (no Docker daemon, no cluster, systemd
// is not PID 1): these tests check what can be checked without them, and
// that docs/ names only metrics that exist.

func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dockerInstructions returns the Dockerfile's instructions with their
// continuation lines joined and comments dropped.
func dockerInstructions(text string) []string {
	var out []string
	cur := ""
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if cur == "" && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		out = append(out, cur+l)
		cur = ""
	}
	return out
}

// goModVersion returns go.mod's "go" version as major, minor.
func goModVersion(t *testing.T) (int, int) {
	m := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a, b
}

func TestDockerfile(t *testing.T) {
	ins := dockerInstructions(readRepoFile(t, "deploy/docker/Dockerfile"))
	var froms, builds []string
	user, goVersion := "", ""
	for _, in := range ins {
		switch f := strings.Fields(in); strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, in)
		case "RUN":
			if strings.Contains(in, "go build") {
				builds = append(builds, in)
			}
		case "USER":
			user = f[1]
		case "ARG":
			if v, ok := strings.CutPrefix(f[1], "GO_VERSION="); ok {
				goVersion = v
			}
		}
	}
	if len(froms) < 2 || !strings.Contains(froms[0], "golang:${GO_VERSION}") {
		t.Errorf("want a multi-stage build from golang:${GO_VERSION}: %q", froms)
	}
	if len(builds) != 1 || !strings.Contains(builds[0], "CGO_ENABLED=0 go build") || !strings.Contains(builds[0], "./cmd/queryd") {
		t.Errorf("want the one build CI checks (CGO_ENABLED=0 go build ... ./cmd/queryd): %q", builds)
	}
	if user == "" || user == "root" || strings.HasPrefix(user, "0") {
		t.Errorf("USER %q: the image must run as a non-root user", user)
	}
	wantMajor, wantMinor := goModVersion(t)
	major, minor, err := parseGoVersion(goVersion)
	if err != nil || major < wantMajor || major == wantMajor && minor < wantMinor {
		t.Errorf("GO_VERSION %q is older than go.mod's go %d.%d", goVersion, wantMajor, wantMinor)
	}
}

// parseGoVersion reads "1.26", "1.26.1" or "1.26-bookworm".
func parseGoVersion(v string) (major, minor int, err error) {
	a, b, _ := strings.Cut(strings.SplitN(v, "-", 2)[0], ".")
	if major, err = strconv.Atoi(a); err != nil {
		return 0, 0, err
	}
	minor, err = strconv.Atoi(strings.SplitN(b, ".", 2)[0])
	return major, minor, err
}

// TestDeployConfigs: the configs deploy/ ships pass `queryd check` and put
// the feed socket where the unit, the volume and the examples expect it.
func TestDeployConfigs(t *testing.T) {
	for _, p := range []string{"deploy/docker/queryd.toml", "deploy/kubernetes/queryd.toml", "queryd.toml.example"} {
		// -local=false: what this host holds (its port 27015, say) is not the
		// config's fault.
		code, _, errOut := run(t, "", "check", "-local=false", "-config", "../../"+p)
		if code != 0 {
			t.Errorf("queryd check %s: %s", p, errOut)
			continue
		}
		// The container's files warn of nothing: their admin address is
		// the container's own network (it warned "keep it on 127.0.0.1 and
		// reach it through an SSH tunnel" at every image build and start).
		if strings.HasPrefix(p, "deploy/") && errOut != "" {
			t.Errorf("queryd check %s warns of what does not apply in a container:\n%s", p, errOut)
		}
		c, err := config.Load("../../"+p, configModules()...)
		if err != nil {
			t.Errorf("%s: %v", p, err)
		} else if c.FeedSocket() != "/run/queryd/feed.sock" {
			t.Errorf("%s: feed socket %q, want /run/queryd/feed.sock", p, c.FeedSocket())
		}
	}
}

// TestSystemdUnit checks the directives the issue asks for; .ci/run runs
// systemd-analyze verify and security on it when the machine has them.
func TestSystemdUnit(t *testing.T) {
	unit := readRepoFile(t, "deploy/systemd/queryd.service")
	keys := map[string][]string{}
	for _, line := range strings.Split(unit, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(k, "#") {
			keys[k] = append(keys[k], v)
		}
	}
	want := map[string]string{
		"Type": "notify", "RuntimeDirectory": "queryd", "User": "queryd",
		"ProtectSystem": "strict", "NoNewPrivileges": "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
		"CapabilityBoundingSet":   "", "AmbientCapabilities": "",
		"ExecStart": "/usr/local/bin/queryd -config /etc/queryd/queryd.toml",
	}
	for k, v := range want {
		if got := keys[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s=%q, want %s=%q", k, got, k, v)
		}
	}
	if !slices.Contains(keys["ExecReload"], "/bin/kill -HUP $MAINPID") {
		t.Errorf("ExecReload=%q, want one sending SIGHUP", keys["ExecReload"])
	}
	if !strings.Contains(readRepoFile(t, "deploy/systemd/queryd.sysusers"), "u queryd ") {
		t.Error("queryd.sysusers does not create the queryd user")
	}
}

// yamlAsJSON parses a YAML file with python3 and PyYAML, when both exist.
func yamlAsJSON(t *testing.T, path string) ([]any, bool) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Logf("%s: YAML not parsed (no python3)", path)
		return nil, false
	}
	const script = `import json, sys
try:
    import yaml
except ImportError:
    sys.exit(3)
print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))`
	out, err := exec.Command(py, "-c", script, "../../"+path).Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
		t.Logf("%s: YAML not parsed (PyYAML is not installed)", path)
		return nil, false
	}
	if err != nil {
		t.Fatalf("%s does not parse as YAML: %v", path, err)
	}
	var docs []any
	if err := json.Unmarshal(out, &docs); err != nil {
		t.Fatal(err)
	}
	return docs, true
}

// TestKubernetesManifest: the Agones sidecar: the GameServer's queryd
// mounts its emptyDir at /run/queryd and its config map, the game mounts
// nothing of queryd's (it feeds nothing: queryd reads Agones), and the
// config (deploy/kubernetes/queryd.toml) has [agones].
func TestKubernetesManifest(t *testing.T) {
	t.Parallel() // waits on timeouts and processes, not on the CPU
	if testing.Short() {
		t.Skip("the manifests parsed by PyYAML: skipped under -short")
	}
	docs, ok := yamlAsJSON(t, "deploy/kubernetes/gameserver.yaml")
	if !ok {
		t.Skip("PyYAML unavailable: deploy/kubernetes/gameserver.yaml not parsed")
	}
	gs := docs[0]
	if s, _ := lookup(gs, "kind"); s != "GameServer" {
		t.Fatalf("kind %v", s)
	}
	vols, _ := lookup(gs, "spec.template.spec.volumes")
	var emptyDir bool
	for _, v := range vols.([]any) {
		if n, _ := lookup(v, "name"); n == "run" {
			_, emptyDir = lookup(v, "emptyDir")
		}
	}
	if !emptyDir {
		t.Error("no emptyDir volume named run")
	}
	cs, _ := lookup(gs, "spec.template.spec.containers")
	for _, c := range cs.([]any) {
		name, _ := lookup(c, "name")
		ms, _ := lookup(c, "volumeMounts")
		mounts := map[any]any{}
		if ms != nil {
			for _, m := range ms.([]any) {
				n, _ := lookup(m, "name")
				mounts[n], _ = lookup(m, "mountPath")
			}
		}
		switch name {
		case "queryd":
			if mounts["run"] != "/run/queryd" || mounts["config"] != "/etc/queryd" {
				t.Errorf("queryd's mounts %v, want run at /run/queryd and config at /etc/queryd", mounts)
			}
		case "game":
			if len(mounts) != 0 {
				t.Errorf("the game mounts %v: the Agones sidecar needs no feeder", mounts)
			}
		}
	}
	if !strings.Contains(readRepoFile(t, "deploy/kubernetes/queryd.toml"), "\n[agones]\n") {
		t.Error("deploy/kubernetes/queryd.toml has no [agones]")
	}
	if _, ok := yamlAsJSON(t, "deploy/kubernetes/kustomization.yaml"); !ok {
		t.Fatal("kustomization.yaml")
	}
}

// allMetricNames starts a daemon with every optional part (relay, the
// upstream poller, a Quake 3 master) and returns the names of the queryd_
// metrics it registers.
func allMetricNames(t *testing.T) []string {
	t.Helper()
	up := q3Server(t)
	master := udpSink(t)
	dir := testDir(t)
	d := startTestDaemon(t, withFeedKeys(t, dir, feedHTTPConfig(t, dir, "127.0.0.1:0", feedToken), `
[relay]
upstream = "`+up+`"
[upstream]
protocol = "quake3"
interval = "100ms"
[[quake3.masters]]
address = "`+master+`"
heartbeat = "DarkPlaces"
[sagl]
http = "127.0.0.1:0"
[sleep]
after = "1h"
start = ["true"]
stop = ["true"]
`))
	deadline := time.Now().Add(5 * time.Second)
	for {
		mfs, err := d.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, mf := range mfs {
			if strings.HasPrefix(mf.GetName(), "queryd_") {
				names = append(names, mf.GetName())
			}
		}
		// Label vectors appear once used: wait for the first heartbeat.
		if slices.Contains(names, "queryd_quake3_heartbeats_total") || time.Now().After(deadline) {
			return append(names, agonesMetricNames(t)...)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// agonesMetricNames are the queryd_agones_ metrics of a daemon with
// [agones] on ([upstream], which allMetricNames's daemon has, refuses it);
// they are registered at start, whether the SDK server answers or not.
func agonesMetricNames(t *testing.T) []string {
	t.Helper()
	d := startTestDaemon(t, writeConfig(t, testDir(t), "[agones]\nsdk = \"127.0.0.1:1\"\n"))
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "queryd_agones_") {
			names = append(names, mf.GetName())
		}
	}
	if len(names) == 0 {
		t.Fatal("a daemon with [agones] exports no queryd_agones_ metric")
	}
	return names
}

// q3Server is a loopback game server answering getstatus (with the
// challenge echoed) and nothing else.
func q3Server(t *testing.T) string {
	return udptest.Answer(t, func(req []byte) [][]byte {
		ch, ok := strings.CutPrefix(string(req), "\xFF\xFF\xFF\xFFgetstatus ")
		if !ok {
			return nil
		}
		return [][]byte{[]byte("\xFF\xFF\xFF\xFFstatusResponse\n\\challenge\\" + ch + "\\sv_hostname\\stock\n")}
	})
}

// udpSink is a loopback UDP socket that reads and drops everything.
func udpSink(t *testing.T) string {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	return c.LocalAddr().String()
}

var (
	metricName    = regexp.MustCompile(`queryd_[a-z0-9_]+`)
	xdpMetricName = regexp.MustCompile(`NewDesc\("(queryd_xdp_[a-z0-9_]+)"`)
)

// TestMetricsDocumented: docs/metrics.md lists every queryd_ metric the
// daemon registers, and neither it nor docs/alerts.yml names another.
func TestMetricsDocumented(t *testing.T) {
	names := allMetricNames(t)
	if len(names) < 10 {
		t.Fatalf("only %d queryd_ metrics: %v", len(names), names)
	}
	// The XDP fast path's metrics (and divert's) are registered only while
	// it is attached: their names come from its source.
	for _, f := range []string{"xdp/metrics_linux.go", "xdp/divert_linux.go"} {
		for _, m := range xdpMetricName.FindAllStringSubmatch(readRepoFile(t, f), -1) {
			names = append(names, m[1])
		}
	}
	doc := readRepoFile(t, "docs/metrics.md")
	for _, n := range names {
		if !strings.Contains(doc, "`"+n+"`") && !strings.Contains(doc, "`"+n+"{") {
			t.Errorf("docs/metrics.md does not document %s", n)
		}
	}
	for _, f := range []string{"docs/metrics.md", "docs/alerts.yml"} {
		for _, n := range metricName.FindAllString(readRepoFile(t, f), -1) {
			if !slices.Contains(names, n) {
				t.Errorf("%s names %s, which queryd does not export", f, n)
			}
		}
	}
}

// TestAlertRules: docs/alerts.yml has the shape Prometheus loads (groups of
// rules with alert, expr, severity and summary), balanced expressions and
// durations Prometheus accepts.
func TestAlertRules(t *testing.T) {
	t.Parallel() // waits on timeouts and processes, not on the CPU
	docs, ok := yamlAsJSON(t, "docs/alerts.yml")
	if !ok {
		t.Skip("PyYAML unavailable: docs/alerts.yml not parsed (its metric names are checked by TestMetricsDocumented)")
	}
	groups, _ := lookup(docs[0], "groups")
	duration := regexp.MustCompile(`^([0-9]+(ms|s|m|h|d|w|y))+$`)
	seen := map[string]bool{}
	n := 0
	for _, g := range groups.([]any) {
		rules, _ := lookup(g, "rules")
		for _, r := range rules.([]any) {
			n++
			name, _ := lookup(r, "alert")
			expr, _ := lookup(r, "expr")
			sev, _ := lookup(r, "labels.severity")
			sum, _ := lookup(r, "annotations.summary")
			a, _ := name.(string)
			e, _ := expr.(string)
			if a == "" || seen[a] || e == "" || !slices.Contains([]any{"critical", "warning", "info"}, sev) || sum == nil {
				t.Errorf("rule %d: alert %q (unique?), expr %q, severity %v, summary %v", n, a, e, sev, sum)
			}
			seen[a] = true
			if !balanced(e) {
				t.Errorf("%s: unbalanced brackets or quotes in %q", a, e)
			}
			if f, ok := lookup(r, "for"); ok && !duration.MatchString(f.(string)) {
				t.Errorf("%s: for %q is not a Prometheus duration", a, f)
			}
		}
	}
	if n < 5 {
		t.Fatalf("%d alert rules", n)
	}
}

// balanced reports whether (), {} and [] nest and quotes close in a PromQL
// expression.
func balanced(expr string) bool {
	var stack []rune
	pair := map[rune]rune{')': '(', '}': '{', ']': '['}
	inQuote := false
	for _, r := range expr {
		switch {
		case r == '"':
			inQuote = !inQuote
		case inQuote:
		case r == '(' || r == '{' || r == '[':
			stack = append(stack, r)
		case pair[r] != 0:
			if len(stack) == 0 || stack[len(stack)-1] != pair[r] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return len(stack) == 0 && !inQuote
}

// lookup follows a dotted path of object keys.
func lookup(doc any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil, false
		}
		if doc, ok = m[k]; !ok {
			return nil, false
		}
	}
	return doc, true
}

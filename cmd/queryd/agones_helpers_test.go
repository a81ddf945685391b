package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/module"
)

// agonesWithin is how soon a change the game makes through the Agones SDK
// must show in every protocol's answer (issue 42's contract).
const agonesWithin = time.Second

// agonesBudgets open the budgets wide: the tests ask all six protocols
// every few milliseconds from one address.
const agonesBudgets = `
[limits]
per_ip_rate = "64MiB"
per_ip_burst = "16MiB"
unproven_rate = "64MiB"
unproven_burst = "16MiB"
[quake3]
packet_rate = 0.0
[bedrock]
enabled = true
packet_rate = 0.0
[sqp]
enabled = true
`

// agonesConfig is a one-server config whose state comes from the Agones
// SDK server at sdk, every protocol on; stale is [feed] stale_after;
// extra goes into [agones].
func agonesConfig(dir, sdk, stale, extra string) string {
	return fmt.Sprintf(`
[listen]
udp = ["127.0.0.1:0"]
workers = 2
[feed]
socket = %q
stale_after = %q
[admin]
listen = "127.0.0.1:0"
[server]
name = "config name"
map = "config_map"
max_players = 10
[agones]
sdk = %q
%s
`, filepath.Join(dir, "feed.sock"), stale, sdk, extra) + agonesBudgets
}

// startAgones runs the daemon (the registration list, [agones] on) until
// the test ends.
func startAgones(t *testing.T, sdk, stale, extra string) *daemontest.Daemon {
	t.Helper()
	dir := testDir(t)
	path := filepath.Join(dir, "queryd.toml")
	if err := os.WriteFile(path, []byte(agonesConfig(dir, sdk, stale, extra)), 0o600); err != nil {
		t.Fatal(err)
	}
	return startTestDaemon(t, path)
}

// askOnce asks addr protocol proto's whole query once, waiting at most
// wait.
func askOnce(m protocolModule, addr string, wait time.Duration) (module.Summary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	a, err := m.Query(ctx, addr, module.QueryOptions{})
	return a.Summary, err
}

// latencies are, per step, how long each protocol took from the SDK call
// to an answer that shows the change.
type latencies struct {
	mu    sync.Mutex
	steps []string
	by    map[string]map[string]time.Duration
}

func (l *latencies) add(step, proto string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string]map[string]time.Duration{}
	}
	if l.by[step] == nil {
		l.by[step] = map[string]time.Duration{}
		l.steps = append(l.steps, step)
	}
	l.by[step][proto] = d
}

// table is the latencies as a Markdown table, a row per step.
func (l *latencies) table() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := protoNames()
	var b strings.Builder
	fmt.Fprintf(&b, "| step | %s |\n|---|%s\n", strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	for _, s := range l.steps {
		fmt.Fprintf(&b, "| %s |", s)
		for _, n := range names {
			if d, ok := l.by[s][n]; ok {
				fmt.Fprintf(&b, " %d ms |", d.Milliseconds())
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// noMap are the protocols that carry no map (SAGL): a change of the map
// alone cannot show there.
var noMap = map[string]bool{"sagl": true}

// untilAll asks every protocol of the registration list at addr (but
// those in skip), each in a loop, until its answer satisfies cond; it
// records each protocol's time since begin under step in lat, and fails
// the test for a protocol that took longer than within (waiting up to 10 s
// to say how long it took).
func untilAll(t *testing.T, addr string, begin time.Time, within time.Duration, lat *latencies, step string, skip map[string]bool, cond func(proto string, s module.Summary) bool) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan string, len(modules))
	for _, m := range modules {
		if skip[m.Name()] {
			continue
		}
		wg.Go(func() {
			var last string
			for time.Since(begin) < 10*time.Second {
				// A short wait: a query sent while queryd is silent gets
				// no answer, and would hide the moment it answers again.
				s, err := askOnce(m, addr, 50*time.Millisecond)
				if err == nil && cond(m.Name(), s) {
					took := time.Since(begin)
					lat.add(step, m.Name(), took)
					if took > within {
						errs <- fmt.Sprintf("%s: %s answered the change after %s, not within %s", step, m.Name(), took.Round(time.Millisecond), within)
					}
					return
				}
				last = fmt.Sprintf("%+v %v", s, err)
				time.Sleep(3 * time.Millisecond)
			}
			errs <- fmt.Sprintf("%s: %s never answered the change in 10s (last: %s)", step, m.Name(), last)
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// named is a condition on the name and map every protocol shows (the
// name alone where the protocol has no map).
func named(name, mapName string) func(string, module.Summary) bool {
	return func(proto string, s module.Summary) bool { return s.Name == name && (s.Map == mapName || noMap[proto]) }
}

// counted is a condition on the player count (and, where the protocol
// says it, the max).
func counted(n, maxPlayers int) func(string, module.Summary) bool {
	return func(_ string, s module.Summary) bool {
		return s.Players != nil && *s.Players == n && (s.MaxPlayers == nil || *s.MaxPlayers == maxPlayers)
	}
}

// a2sNames asks A2S_PLAYER and returns the players' names, sorted.
func a2sNames(t *testing.T, addr string) []string {
	t.Helper()
	c, err := a2s.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Timeout = time.Second
	ps, err := c.Players()
	if err != nil {
		t.Fatalf("A2S_PLAYER: %v", err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// wantNoAnswer asserts that no protocol answers addr (each asked once for
// 300 ms).
func wantNoAnswer(t *testing.T, addr, what string) {
	t.Helper()
	var wg sync.WaitGroup
	for _, m := range modules {
		wg.Go(func() {
			if s, err := askOnce(m, addr, 300*time.Millisecond); err == nil {
				t.Errorf("%s: %s still answers: %+v", what, m.Name(), s)
			}
		})
	}
	wg.Wait()
}

// untilSilence waits up to limit for server's silence to satisfy cond and
// returns how long that took since begin.
func untilSilence(t *testing.T, s *daemon.Server, begin time.Time, limit time.Duration, what string, cond func(daemon.Silence) bool) time.Duration {
	t.Helper()
	for {
		sl := s.Silence()
		if cond(sl) {
			return time.Since(begin)
		}
		if time.Since(begin) > limit {
			t.Fatalf("%s: not within %s: %+v", what, limit, sl)
		}
		time.Sleep(time.Millisecond)
	}
}

// serverState is queryd_server_state's series at 1 for server: its state
// and reason.
func serverState(t *testing.T, d *daemontest.Daemon, server string) (state, reason string) {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "queryd_server_state" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["server"] == server && m.GetGauge().GetValue() == 1 {
				return l["state"], l["reason"]
			}
		}
	}
	return "", ""
}

// wantState asserts what /healthz (or /healthz/NAME with server),
// /status.json and queryd_server_state say of a server: its state and,
// silent, its reason; gsState is the GameServer's state /status.json's
// agones card shows.
func wantState(t *testing.T, d *daemontest.Daemon, server string, multi bool, state daemon.State, reason daemon.Reason, gsState string) {
	t.Helper()
	hpath, spath := "/healthz", "/status.json"
	if multi {
		hpath, spath = "/healthz/"+server, "/status.json?server="+server
	}
	code, h := getJSON(t, d, hpath)
	wantCode := 200
	if state == daemon.StateSilent {
		wantCode = 503
	}
	gotReason, _ := h["reason"].(string)
	if code != wantCode || h["state"] != string(state) || gotReason != string(reason) {
		t.Errorf("%s: %d %v, want %d state %s reason %q", hpath, code, h, wantCode, state, reason)
	}
	if st, r := serverState(t, d, server); st != string(state) || r != string(reason) {
		t.Errorf("queryd_server_state{server=%q}: state %q reason %q, want %s %q", server, st, r, state, reason)
	}
	// /status.json is made once a second: wait for a sample that says it.
	var last map[string]any
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_, sj := getJSON(t, d, spath)
		last = sj
		st, _ := sj["state"].(map[string]any)
		sil, _ := sj["silent"].(map[string]any)
		ag, _ := sj["agones"].(map[string]any)
		r, _ := sil["reason"].(string)
		if st["state"] == string(state) && r == string(reason) && ag != nil && ag["state"] == gsState {
			return
		}
	}
	t.Errorf("%s: want state %s reason %q agones.state %q, got state %v silent %v agones %v", spath, state, reason, gsState,
		last["state"], last["silent"], last["agones"])
}

// agonesReads is queryd_agones_reads_total{server, source, outcome}.
func agonesReads(t *testing.T, d *daemontest.Daemon, server, source, outcome string) float64 {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "queryd_agones_reads_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["server"] == server && l["source"] == source && l["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// sameStrings reports whether a and b hold the same strings in order.
func sameStrings(a, b []string) bool { return slices.Equal(a, b) }

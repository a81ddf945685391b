package interop

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/netnstest"
	"github.com/queryd/queryd/internal/testkit"
)

// The lifecycle table of issue 38 (the liveness contract, docs/feed.md
// "What queryd answers"), against the race-built daemon: each row puts a
// server in one state and asserts what the real clients (qstat and
// gamedig, A2S) read and what /healthz, /healthz/NAME, /status.json and
// queryd_server_state say. Beside each of rows 1-5, row 6 runs the real
// `queryd check`, a feed get, a rejected peer and a rejected patch, and
// asserts that nothing changes, at once and past stale_after. The table
// runs on the socket path (TestLifecycleSocket) and with the XDP program
// answering through a veth (TestLifecycleXDP), where the program's own
// counters show it answered, or dropped the queries as stale.

// lifeStaleAfter is [feed] stale_after in the table: a row waits past it.
const lifeStaleAfter = 2 * time.Second

// The names the clients read in each state.
const (
	lifePlaceholder = "lifecycle placeholder" // [server]
	lifePlaceMap    = "placeholder_map"
	lifeFedName     = "lifecycle fed" // the feeder's
	lifeFedMap      = "fed_map"
	lifeStandInName = "lifecycle stand-in" // the stock server's (RichState's map)
	lifeGoodName    = "lifecycle good"     // host mode: the good server's feeder
)

// TestLifecycleSocket runs the lifecycle table on the socket path, on
// loopback.
func TestLifecycleSocket(t *testing.T) {
	if testing.Short() {
		t.Skip("the lifecycle table waits past stale_after several times (about a minute): -short")
	}
	runLifecycle(t, &lifeEnv{})
}

// TestLifecycleXDP runs the lifecycle table with [xdp] on: the daemon in a
// network namespace with the program on its end of a veth, the clients in
// the other namespace, so that every query meets the program first.
func TestLifecycleXDP(t *testing.T) {
	if testing.Short() {
		t.Skip("the lifecycle table with XDP (network namespaces, about 90 s): -short")
	}
	runLifecycle(t, &lifeEnv{n: netnstest.New(t)}) // skips unless root
}

// runLifecycle runs the table's rows in e, each a subtest named for its
// row; the daemons run one after the other (one XDP program per
// interface).
func runLifecycle(t *testing.T, e *lifeEnv) {
	NeedCommand(t, "quakestat")
	NeedCommand(t, "node")
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules")); err != nil {
		t.Fatalf("interop/node/node_modules is missing: run `npm ci` in interop/node (.ci/run does): %v", err)
	}
	start := time.Now()
	lifeFeedRows(t, e)
	lifeUpstreamRows(t, e)
	t.Run("7_host_one_server_down", func(t *testing.T) { lifeHostDown(t, e) })
	t.Logf("the table took %v", time.Since(start).Round(time.Millisecond))
}

// lifeFeedRows are rows 1-3 on one daemon a feeder feeds: never fed, fed,
// the feeder gone past stale_after; each with row 6 beside it.
func lifeFeedRows(t *testing.T, e *lifeEnv) {
	d := StartDaemon(t, e.options(Options{
		Protocols: map[string]map[string]any{"a2s": nil},
		Server:    map[string]any{"name": lifePlaceholder, "map": lifePlaceMap, "max_players": 8},
		Tables:    map[string]map[string]any{"feed": {"stale_after": lifeStaleAfter.String()}},
	}))
	defer d.Stop() // before the next daemon attaches its program
	notFed := lifeWant{state: "not_fed", name: lifePlaceholder, mapName: lifePlaceMap}
	fed := lifeWant{state: "answering", fed: true, name: lifeFedName, mapName: lifeFedMap}
	gone := lifeWant{state: "silent", reason: "feed", fed: true}

	lifeRow(t, "1_never_fed", func(t *testing.T) {
		seen := e.observe(t, d, "main", d.UDPAddr, notFed)
		e.beside(t, d, "main", d.UDPAddr, notFed, seen)
	})

	var feeder *lifeFeeder // row 2's, pinging until row 3 stops it
	defer func() {
		if feeder != nil {
			feeder.stop(nil)
		}
	}()
	lifeRow(t, "2_fed", func(t *testing.T) {
		feeder = startLifeFeeder(t, d.Socket, map[string]any{"name": lifeFedName, "map": lifeFedMap, "max_players": 8})
		e.waitState(t, d, "main", d.UDPAddr, fed)
		seen := e.observe(t, d, "main", d.UDPAddr, fed)
		e.beside(t, d, "main", d.UDPAddr, fed, seen) // the feeder keeps pinging meanwhile
	})

	lifeRow(t, "3_feeder_gone", func(t *testing.T) {
		if feeder == nil {
			t.Fatal("row 2 did not start the feeder")
		}
		left := time.Now()
		feeder.stop(t)
		e.waitState(t, d, "main", d.UDPAddr, gone)
		t.Logf("silent %v after the feeder left (stale_after %v)", time.Since(left).Round(time.Millisecond), lifeStaleAfter)
		seen := e.observe(t, d, "main", d.UDPAddr, gone)
		e.beside(t, d, "main", d.UDPAddr, gone, seen)
	})
}

// lifeUpstreamRows are rows 4 and 5 on a daemon that polls a stock A2S
// server (the stand-in) and has no feeder: the game not up yet, crashed,
// restarted; each with row 6 beside it.
func lifeUpstreamRows(t *testing.T, e *lifeEnv) {
	game := e.standInAddr(t)
	stand := startStandInNamed(t, e.serverNS(), game, lifeStandInName)
	stand.mute.Store(true) // not up yet
	d := StartDaemon(t, e.options(Options{
		Protocols: map[string]map[string]any{"a2s": nil},
		Server:    map[string]any{"name": lifePlaceholder, "map": lifePlaceMap, "max_players": 8},
		Tables: map[string]map[string]any{
			"feed":     {"stale_after": lifeStaleAfter.String()},
			"upstream": {"protocol": "a2s", "address": game.String(), "interval": "250ms", "timeout": "200ms"},
		},
	}))
	defer d.Stop()
	standInMap := RichState().Map
	unanswered := lifeWant{state: "silent", reason: "upstream_unanswered"}
	crashed := lifeWant{state: "silent", reason: "upstream", fed: true}
	answering := lifeWant{state: "answering", fed: true, name: lifeStandInName, mapName: standInMap}

	lifeRow(t, "4_game_not_up_yet", func(t *testing.T) {
		seen := e.observe(t, d, "main", d.UDPAddr, unanswered)
		e.beside(t, d, "main", d.UDPAddr, unanswered, seen)
	})

	lifeRow(t, "4_game_crashed", func(t *testing.T) {
		stand.mute.Store(false)
		e.waitState(t, d, "main", d.UDPAddr, answering)
		crash := time.Now()
		stand.mute.Store(true)
		e.waitState(t, d, "main", d.UDPAddr, crashed)
		t.Logf("silent %v after the game server stopped answering (stale_after %v)", time.Since(crash).Round(time.Millisecond), lifeStaleAfter)
		seen := e.observe(t, d, "main", d.UDPAddr, crashed)
		e.beside(t, d, "main", d.UDPAddr, crashed, seen)
	})

	lifeRow(t, "5_game_restarted", func(t *testing.T) {
		stand.mute.Store(false)
		e.waitState(t, d, "main", d.UDPAddr, answering)
		seen := e.observe(t, d, "main", d.UDPAddr, answering)
		e.beside(t, d, "main", d.UDPAddr, answering, seen) // the game server keeps answering the polls
	})
}

// lifeRow runs one row as a subtest and logs how long it took.
func lifeRow(t *testing.T, name string, row func(t *testing.T)) {
	t.Helper()
	start := time.Now()
	t.Run(name, row)
	t.Logf("row %s: %v", name, time.Since(start).Round(time.Millisecond))
}

// lifeHostDown is row 7: a host of four servers from [servers] include:
// the main file's (never fed), good.toml (fed), bad.toml (refused: an
// unknown key) and held.toml (cannot start: another socket holds its UDP
// address). The two down ones are down everywhere: /healthz 503 naming
// them, /healthz/NAME 503, /status.json?server=NAME the "down" document
// with the error, queryd_server_state down with reason refused and start;
// the good one answers qstat and gamedig.
func lifeHostDown(t *testing.T, e *lifeEnv) {
	dir, err := os.MkdirTemp("", "qdl") // short: Unix socket paths must stay < 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	good, held := e.hostAddr(t, 2), e.hostAddr(t, 3)
	holder := e.holdUDP(t, held)
	defer holder.Close()
	files := map[string]string{
		"good.toml": hostServerFile(good.String(), filepath.Join(dir, "good.sock")),
		"bad.toml":  "bogus_key = true\n" + hostServerFile(e.hostAddr(t, 4).String(), filepath.Join(dir, "bad.sock")),
		"held.toml": hostServerFile(held.String(), filepath.Join(dir, "held.sock")),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := StartDaemon(t, e.options(Options{
		Protocols: map[string]map[string]any{"a2s": nil},
		Server:    map[string]any{"name": lifePlaceholder, "map": lifePlaceMap, "max_players": 8},
		Tables: map[string]map[string]any{
			"feed":    {"stale_after": lifeStaleAfter.String()},
			"servers": {"include": []string{filepath.Join(dir, "*.toml")}},
		},
	}))
	defer d.Stop()
	c, err := feed.Dial(filepath.Join(dir, "good.sock"))
	if err != nil {
		t.Fatalf("the good server's feed: %v", err)
	}
	defer c.Close()
	if _, err := c.Replace(map[string]any{"name": lifeGoodName, "map": lifeFedMap, "max_players": 8}); err != nil {
		t.Fatal(err)
	}
	// The good server: answering (it runs no stale timer past this row:
	// stale_after is 60 s in its file).
	answering := lifeWant{state: "answering", fed: true, name: lifeGoodName, mapName: lifeFedMap, ok503: true}
	e.waitState(t, d, "good", good.String(), answering)
	e.observe(t, d, "good", good.String(), answering)

	// /healthz: 503, every server by name.
	code, h := getJSON(t, d, "/healthz")
	servers, _ := h["servers"].(map[string]any)
	t.Logf("/healthz: %d %v", code, h)
	if code != 503 || h["ok"] != false {
		t.Errorf("/healthz: %d ok=%v, want 503 and ok false (two servers are down)", code, h["ok"])
	}
	for name, want := range map[string]string{"main": "not_fed", "good": "answering", "bad": "down", "held": "down"} {
		s, _ := servers[name].(map[string]any)
		if s["state"] != want {
			t.Errorf("/healthz servers.%s: %v, want state %q", name, s, want)
		}
	}
	for name, why := range map[string]string{"bad": "refused", "held": "start"} {
		wantErr := map[string]string{"bad": "bogus_key", "held": held.String()}[name]
		code, h := getJSON(t, d, "/healthz/"+name)
		if code != 503 || h["state"] != "down" || h["ok"] != false || !strings.Contains(fmt.Sprint(h["error"]), wantErr) {
			t.Errorf("/healthz/%s: %d %v, want 503, state down and an error naming %q", name, code, h, wantErr)
		}
		if h["reason"] != "down" { // docs/metrics.md: the metric says why (refused, start), /healthz's error
			t.Errorf("/healthz/%s: reason %v, want \"down\"", name, h["reason"])
		}
		code, doc := getJSON(t, d, "/status.json?server="+name)
		st, _ := doc["state"].(map[string]any)
		if since, there := st["since"]; code != 200 || st["state"] != "down" || st["fed"] != false || !there || since != nil ||
			!strings.Contains(fmt.Sprint(st["error"]), wantErr) {
			t.Errorf("/status.json?server=%s: %d state %v, want state down, since null, fed false and an error naming %q", name, code, st, wantErr)
		}
		checkServerState(t, d, name, "down", why)
	}
	checkServerState(t, d, "main", "not_fed", "")
}

// lifeEnv is where the table runs: the socket path on loopback (n nil),
// or a test network with the XDP program on the server's end.
type lifeEnv struct {
	n *netnstest.Net
}

func (e *lifeEnv) xdp() bool { return e.n != nil }

// serverNS is the namespace the daemon and the stand-in run in ("": the
// test's).
func (e *lifeEnv) serverNS() string {
	if e.xdp() {
		return e.n.ServerNS
	}
	return ""
}

// options lays the environment over o: with XDP, the daemon in the server
// namespace on xdpUDP, the program on its interface.
func (e *lifeEnv) options(o Options) Options {
	if !e.xdp() {
		return o
	}
	o.Netns, o.UDPAddr = e.n.ServerNS, xdpUDP.String()
	o.Tables["xdp"] = map[string]any{"interfaces": []string{e.n.ServerIf}, "mode": "native"}
	return o
}

// standInAddr is where the stock server listens: a free loopback port,
// or the server namespace's address (queryd polls it locally: no frame of
// the poll crosses the program).
func (e *lifeEnv) standInAddr(t *testing.T) netip.AddrPort { return e.hostAddr(t, 1) }

// hostAddr is a further UDP address for a server: a free loopback port,
// or xdpUDP's port + i on the server namespace's address.
func (e *lifeEnv) hostAddr(t *testing.T, i int) netip.AddrPort {
	if e.xdp() {
		return netip.AddrPortFrom(netnstest.ServerAddr4, xdpUDP.Port()+uint16(i))
	}
	return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(testkit.FreeUDPPort(t)))
}

// holdUDP binds a, in the server's namespace, so that a server cannot.
func (e *lifeEnv) holdUDP(t *testing.T, a netip.AddrPort) *net.UDPConn {
	var c *net.UDPConn
	listen := func() (err error) {
		c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(a))
		return err
	}
	var err error
	if e.xdp() {
		err = netnstest.Do(e.n.ServerNS, listen)
	} else {
		err = listen()
	}
	if err != nil {
		t.Fatalf("holding %s: %v", a, err)
	}
	return c
}

// inClient runs fn where the clients are: the client namespace with XDP
// (fn's sockets and the processes it starts are there), else here.
func (e *lifeEnv) inClient(fn func() error) error {
	if e.xdp() {
		return netnstest.Do(e.n.ClientNS, fn)
	}
	return fn()
}

// lifeWant is what a server answers in a row.
type lifeWant struct {
	state  string // answering, not_fed, silent
	reason string // silent: feed, upstream, upstream_unanswered
	fed    bool
	// name and mapName are what the clients read; none while silent.
	name, mapName string
	// ok503: the host as a whole answers 503 (another server is down).
	ok503 bool
}

func (w lifeWant) String() string {
	if w.state == "silent" {
		return fmt.Sprintf("silent (%s), fed %v", w.reason, w.fed)
	}
	return fmt.Sprintf("%s %q on %s, fed %v", w.state, w.name, w.mapName, w.fed)
}

// lifeSeen is what an observation read that must not change beside it.
type lifeSeen struct {
	since string // /healthz/NAME's state_since
}

// gamedigOptions are gamedig's options for w: one attempt, with its
// default socket timeout (2 s), or 1 s where nothing must answer (a
// loopback or veth answer takes milliseconds; node's own start is the
// slow part on a busy machine).
func (w lifeWant) gamedigOptions() map[string]any {
	timeout := 2000
	if w.state == "silent" {
		timeout = 1000
	}
	return map[string]any{"maxRetries": 1, "socketTimeout": timeout, "attemptTimeout": 5000}
}

// observe asks addr with qstat and gamedig at once (from the client's
// namespace with XDP) and checks that they read w (or nothing), that the
// program answered (or dropped every query as stale), and that /healthz,
// /healthz/NAME, /status.json and queryd_server_state say w.
func (e *lifeEnv) observe(t *testing.T, d *Daemon, server, addr string, w lifeWant) lifeSeen {
	t.Helper()
	before := readCounts(t, d, server)
	asked := time.Now()
	q, g := e.askClients(t, addr, w)
	t.Logf("qstat and gamedig took %v", time.Since(asked).Round(time.Millisecond))
	checkQstatSees(t, q, w)
	checkGamedigSees(t, g, w)
	after := readCounts(t, d, server)
	checkCounted(t, "queryd_requests_total", after.all.sub(before.all), w)
	if e.xdp() {
		checkCounted(t, "the program (queryd_xdp_requests_total)", after.xdp.sub(before.xdp), w)
	}
	seen := checkHealth(t, d, server, w)
	checkStatusJSON(t, d, server, w)
	checkServerState(t, d, server, w.state, w.reason)
	return seen
}

// askClients runs qstat and gamedig (protocol valve) on addr at once.
func (e *lifeEnv) askClients(t *testing.T, addr string, w lifeWant) (q, g CmdResult) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		e.inClient(func() error {
			q = RunCmd(t, 30*time.Second, "", "quakestat", "-a2s", addr, "-json", "-nnx")
			return nil
		})
	}()
	go func() {
		defer wg.Done()
		e.inClient(func() error { g = RunGamedig(t, "valve", addr, w.gamedigOptions()); return nil })
	}()
	wg.Wait()
	return q, g
}

// checkQstatSees checks qstat's -json output: online with w's name and
// map, or, while silent, no answer.
func checkQstatSees(t *testing.T, r CmdResult, w lifeWant) {
	t.Helper()
	if r.Err != nil {
		t.Errorf("qstat: %v", r.Err)
		return
	}
	var s []qstatServer
	if err := jsonUnmarshal(r.Stdout, &s); err != nil || len(s) != 1 {
		t.Errorf("qstat output is not one server (%v):\n%s", err, r.Stdout)
		return
	}
	if w.state == "silent" {
		if s[0].Status == "online" || s[0].Name != "" {
			t.Errorf("qstat read %q on %q (%s) from a silent server", s[0].Name, s[0].Map, s[0].Status)
		}
		return
	}
	if s[0].Status != "online" || s[0].Name != w.name || s[0].Map != w.mapName {
		t.Errorf("qstat: %s %q on %q, want online %q on %q", s[0].Status, s[0].Name, s[0].Map, w.name, w.mapName)
	}
}

// checkGamedigSees checks gamedig's result: w's name and map, or, while
// silent, a failed query.
func checkGamedigSees(t *testing.T, r CmdResult, w lifeWant) {
	t.Helper()
	if w.state == "silent" {
		if r.Err == nil {
			t.Errorf("gamedig read a silent server:\n%s", r.Stdout)
		}
		return
	}
	if r.Err != nil {
		t.Errorf("gamedig: %v", r.Err)
		return
	}
	var g gamedigResult
	if err := jsonUnmarshal(r.Stdout, &g); err != nil {
		t.Errorf("gamedig output: %v\n%s", err, r.Stdout)
		return
	}
	if g.Name != w.name || g.Map != w.mapName {
		t.Errorf("gamedig: %q on %q, want %q on %q", g.Name, g.Map, w.name, w.mapName)
	}
}

// checkHealth checks /healthz/NAME (and, unless another server of the
// host is down, /healthz): 200 while the server answers (the game's state
// or [server]), 503 while silent; state, fed, reason and state_since. It
// returns what must not change beside the row.
func checkHealth(t *testing.T, d *Daemon, server string, w lifeWant) lifeSeen {
	t.Helper()
	wantCode := 200
	if w.state == "silent" {
		wantCode = 503
	}
	paths := []string{"/healthz/" + server}
	if !w.ok503 {
		paths = append(paths, "/healthz")
	}
	var seen lifeSeen
	for _, p := range paths {
		code, h := getJSON(t, d, p)
		since, _ := h["state_since"].(string)
		if code != wantCode || h["state"] != w.state || h["fed"] != w.fed || since == "" {
			t.Errorf("%s: %d %v, want %d with state %q, fed %v and state_since", p, code, h, wantCode, w.state, w.fed)
		}
		if reason, _ := h["reason"].(string); reason != w.reason {
			t.Errorf("%s: reason %q, want %q", p, reason, w.reason)
		}
		if p == paths[0] {
			seen.since = since
		}
	}
	return seen
}

// checkStatusJSON waits up to 3 s (the document is sampled once a second)
// for /status.json?server=NAME's state object to say w, and checks its
// silent card.
func checkStatusJSON(t *testing.T, d *Daemon, server string, w lifeWant) {
	t.Helper()
	var st, silent map[string]any
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, doc := getJSON(t, d, "/status.json?server="+server)
		st, _ = doc["state"].(map[string]any)
		silent, _ = doc["silent"].(map[string]any)
		if st["state"] == w.state && st["fed"] == w.fed && st["since"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("/status.json?server=%s state: %v, want state %q, fed %v and since", server, st, w.state, w.fed)
			return
		}
	}
	reason, _ := silent["reason"].(string)
	if silent["silent"] != (w.state == "silent") || reason != w.reason {
		t.Errorf("/status.json?server=%s silent: %v, want silent %v with reason %q", server, silent, w.state == "silent", w.reason)
	}
}

// checkServerState checks queryd_server_state for server: 1 for state
// (with reason), 0 for each other state (reason "").
func checkServerState(t *testing.T, d *Daemon, server, state, reason string) {
	t.Helper()
	m := readMetrics(t, d)
	for _, st := range []string{"answering", "not_fed", "silent", "down"} {
		want, r := 0.0, ""
		if st == state {
			want, r = 1, reason
		}
		sample := fmt.Sprintf(`queryd_server_state{reason=%q,server=%q,state=%q}`, r, server, st)
		if got, ok := m[sample]; !ok || got != want {
			t.Errorf("%s = %v (there: %v), want %v; the server's series: %v", sample, got, ok, want, m.matching(`queryd_server_state{`, `server="`+server+`"`))
		}
	}
}

// waitState waits up to stale_after + 5 s for /healthz/NAME to say w's
// state and reason, then until a raw A2S_INFO from the client side is
// answered with w's name (or, silent, not answered): the XDP program
// follows the daemon's value within 50 ms.
func (e *lifeEnv) waitState(t *testing.T, d *Daemon, server, addr string, w lifeWant) {
	t.Helper()
	limit := lifeStaleAfter + 5*time.Second
	deadline := time.Now().Add(limit)
	var h map[string]any
	for {
		_, h = getJSON(t, d, "/healthz/"+server)
		if reason, _ := h["reason"].(string); h["state"] == w.state && reason == w.reason {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz/%s: %v, not %s within %v", server, h, w, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		name, answered := e.probe(t, addr, 500*time.Millisecond)
		if (w.state == "silent") != answered && (!answered || name == w.name) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("A2S_INFO answered %v with %q while /healthz says %v: want %s", answered, name, h, w)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// probe asks addr A2S_INFO once from the client side (its challenge
// answered, all within limit) and returns the name it read and whether it
// was answered.
func (e *lifeEnv) probe(t *testing.T, addr string, limit time.Duration) (string, bool) {
	var name string
	err := e.inClient(func() error {
		c, err := a2s.Dial(addr)
		if err != nil {
			return err
		}
		defer c.Close()
		c.Timeout = limit
		info, err := c.Info()
		if err != nil {
			return errNoAnswer
		}
		name = info.Name
		return nil
	})
	if err != nil && !errors.Is(err, errNoAnswer) {
		t.Fatalf("A2S_INFO probe of %s: %v", addr, err)
	}
	return name, err == nil
}

var errNoAnswer = errors.New("no answer")

// beside is row 6 beside a row: the real `queryd check` on the daemon's
// config, a feed get, a peer (rejected: no relay) and a rejected patch;
// then the server must say what it said (seen) at once, for half of
// stale_after, and past stale_after: each of them could have armed, or
// fed, the stale timer. The clients read w again at the end.
func (e *lifeEnv) beside(t *testing.T, d *Daemon, server, addr string, w lifeWant, seen lifeSeen) {
	t.Helper()
	t.Run("6_check_get_peer", func(t *testing.T) {
		e.check(t, d)
		lifeReadOnly(t, d.Socket)
		done := time.Now()
		steady := true
		for steady && time.Since(done) < lifeStaleAfter/2 {
			steady = e.checkSteady(t, d, server, addr, w, seen, "at once")
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(time.Until(done.Add(lifeStaleAfter + 750*time.Millisecond)))
		e.checkSteady(t, d, server, addr, w, seen, "past stale_after")
		after := e.observe(t, d, server, addr, w)
		if after != seen {
			t.Errorf("state_since %s before check, get and peer; %s after", seen.since, after.since)
		}
	})
}

// checkSteady reports whether /healthz/NAME still says w since seen and
// a raw A2S_INFO is still answered with w's name (or not answered); when
// (in the errors) says at which point of row 6.
func (e *lifeEnv) checkSteady(t *testing.T, d *Daemon, server, addr string, w lifeWant, seen lifeSeen, when string) bool {
	t.Helper()
	ok := true
	_, h := getJSON(t, d, "/healthz/"+server)
	if reason, _ := h["reason"].(string); h["state"] != w.state || reason != w.reason || h["state_since"] != seen.since {
		t.Errorf("%s: /healthz/%s: %v, want still %s since %s", when, server, h, w, seen.since)
		ok = false
	}
	// Nothing answers a silent server in 500 ms; an answering one may
	// take its time on a busy machine.
	limit := 2 * time.Second
	if w.state == "silent" {
		limit = 500 * time.Millisecond
	}
	if name, answered := e.probe(t, addr, limit); answered != (w.state != "silent") || name != w.name {
		t.Errorf("%s: A2S_INFO answered %v with %q, want still %s", when, answered, name, w)
		ok = false
	}
	return ok
}

// check runs the real `queryd check -config FILE` beside the running
// daemon (in its namespace with XDP): it must pass and say it saw the
// running queryd on the feed socket.
func (e *lifeEnv) check(t *testing.T, d *Daemon) {
	t.Helper()
	name, args := querydBin, []string{"check", "-config", d.ConfigPath}
	if e.xdp() {
		name, args = "ip", append([]string{"netns", "exec", e.n.ServerNS, querydBin}, args...)
	}
	r := RunCmd(t, 30*time.Second, "", name, args...)
	if r.Err != nil || !strings.Contains(r.Stdout+r.Stderr, "a running queryd answers on the feed socket") {
		t.Errorf("queryd check beside the daemon: %v, want a pass noting the running queryd:\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
}

// lifeReadOnly sends what must never count as feed activity, each on a
// connection of its own: get (answered), peer (refused: relay mode is
// off) and a patch queryd refuses.
func lifeReadOnly(t *testing.T, socket string) {
	t.Helper()
	dial := func() *feed.Client {
		c, err := feed.Dial(socket)
		if err != nil {
			t.Fatalf("feed: %v", err)
		}
		return c
	}
	c := dial()
	if _, doc, err := c.Get(); err != nil || len(doc) == 0 {
		t.Errorf("feed get: %v (%d bytes of state)", err, len(doc))
	}
	c.Close()
	c = dial()
	var re *feed.ReplyError
	if _, err := c.Do(map[string]any{"op": "peer", "port": 27015}); !errors.As(err, &re) {
		t.Errorf("feed peer without relay: %v, want it refused", err)
	}
	c.Close()
	c = dial()
	if _, err := c.Patch(map[string]any{"max_players": "lots"}); !errors.As(err, &re) {
		t.Errorf("feed patch max_players \"lots\": %v, want it refused", err)
	}
	c.Close()
}

// lifeFeeder is a game server's feeder: it replaces the state, then pings
// every 400 ms until stopped (it outlives the subtest that starts it).
type lifeFeeder struct {
	c    *feed.Client
	quit chan struct{}
	done chan error
}

func startLifeFeeder(t *testing.T, socket string, doc map[string]any) *lifeFeeder {
	t.Helper()
	c, err := feed.Dial(socket)
	if err != nil {
		t.Fatalf("feed: %v", err)
	}
	if _, err := c.Replace(doc); err != nil {
		c.Close()
		t.Fatalf("feed replace: %v", err)
	}
	f := &lifeFeeder{c: c, quit: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		tick := time.NewTicker(400 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-f.quit:
				f.done <- nil
				return
			case <-tick.C:
				if _, err := c.Ping(); err != nil {
					f.done <- fmt.Errorf("feed ping: %w", err)
					return
				}
			}
		}
	}()
	return f
}

// stop ends the pings and closes the connection (the feeder is gone); a
// ping that failed fails t.
func (f *lifeFeeder) stop(t *testing.T) {
	select {
	case <-f.quit:
		return
	default:
	}
	close(f.quit)
	err := <-f.done
	f.c.Close()
	if err != nil && t != nil {
		t.Errorf("the feeder: %v", err)
	}
}

// getJSON GETs path on the daemon's admin listener and decodes its JSON
// body (any status).
func getJSON(t *testing.T, d *Daemon, path string) (int, map[string]any) {
	t.Helper()
	res, err := d.HTTPClient(3 * time.Second).Get("http://" + d.AdminAddr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatalf("GET %s: %d, body: %v", path, res.StatusCode, err)
	}
	return res.StatusCode, doc
}

// lifeMetrics are the samples of one /metrics, by name and labels as
// printed.
type lifeMetrics map[string]float64

// readMetrics reads every sample of the daemon's /metrics.
func readMetrics(t *testing.T, d *Daemon) lifeMetrics {
	t.Helper()
	res, err := d.HTTPClient(3 * time.Second).Get("http://" + d.AdminAddr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	m := lifeMetrics{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			m[line[:i]] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading /metrics: %v", err)
	}
	return m
}

// matching lists the samples that start with prefix and contain part.
func (m lifeMetrics) matching(prefix, part string) []string {
	var out []string
	for k, v := range m {
		if strings.HasPrefix(k, prefix) && strings.Contains(k, part) {
			out = append(out, fmt.Sprintf("%s %v", k, v))
		}
	}
	sort.Strings(out)
	return out
}

// lifeCount is a server's A2S outcomes.
type lifeCount struct{ answered, challenged, stale float64 }

func (a lifeCount) sub(b lifeCount) lifeCount {
	return lifeCount{a.answered - b.answered, a.challenged - b.challenged, a.stale - b.stale}
}

// lifeCounts are a server's A2S outcomes in all (queryd_requests_total:
// the socket path's and the program's) and the program's own
// (queryd_xdp_requests_total; zero without XDP).
type lifeCounts struct{ all, xdp lifeCount }

// readCounts reads server's lifeCounts from one /metrics.
func readCounts(t *testing.T, d *Daemon, server string) lifeCounts {
	t.Helper()
	m := readMetrics(t, d)
	read := func(metric string) lifeCount {
		get := func(outcome string) float64 {
			return m[fmt.Sprintf(`%s{outcome=%q,protocol="a2s",server=%q}`, metric, outcome, server)]
		}
		return lifeCount{get("answered"), get("challenged"), get("stale")}
	}
	if _, ok := m[fmt.Sprintf(`queryd_requests_total{outcome="answered",protocol="a2s",server=%q}`, server)]; !ok {
		t.Fatalf("/metrics has no queryd_requests_total of server %q: %v", server, m.matching("queryd_requests_total{", ""))
	}
	return lifeCounts{all: read("queryd_requests_total"), xdp: read("queryd_xdp_requests_total")}
}

// checkCounted checks what the clients' queries were counted as: while
// silent none answered or challenged and some dropped as stale, else some
// answered.
func checkCounted(t *testing.T, what string, got lifeCount, w lifeWant) {
	t.Helper()
	t.Logf("%s: %v answered, %v challenged, %v dropped as stale of the clients' A2S queries", what, got.answered, got.challenged, got.stale)
	if w.state == "silent" && (got.answered+got.challenged != 0 || got.stale == 0) {
		t.Errorf("silent: %s: %v answered, %v challenged, %v stale: want none answered or challenged, some stale", what, got.answered, got.challenged, got.stale)
	}
	if w.state != "silent" && got.answered == 0 {
		t.Errorf("%s: %s: none of the clients' queries answered (%v challenged, %v stale)", w.state, what, got.challenged, got.stale)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

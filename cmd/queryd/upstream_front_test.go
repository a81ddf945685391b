package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/internal/udptest"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/sagl"
	"github.com/queryd/queryd/upstream"
)

// mods are the protocol modules a front queryd answers in: the
// registration list.
var mods = daemonModules()

// onlyA2S makes a queryd answer A2S and nothing else: the "stock" game
// server of the tests.
const onlyA2S = "[gamespy4]\nenabled = false\n[sagl]\nenabled = false\n[quake3]\nenabled = false\n"

// demanding is the state fed to the stock server: 40 players (non-ASCII
// names, negative and extreme scores, 2 bots connected longest) and 60
// rules, enough that A2S_RULES is a split reply.
func demanding() (doc map[string]any, names []string, rules map[string]string) {
	players := map[string]any{}
	for i := range 40 {
		name := fmt.Sprintf("player %02d ünïcødé 日本", i)
		p := map[string]any{"name": name, "score": (i - 20) * 1000, "ping": 20 + i, "time": 100 + i}
		if i >= 38 {
			name = fmt.Sprintf("BOT %d", i)
			p = map[string]any{"name": name, "score": 1 << 30, "time": 5000 + i, "bot": true}
		}
		players[strconv.Itoa(i*3+1)] = p
		names = append(names, name)
	}
	rules = map[string]string{}
	r := map[string]any{}
	for i := range 60 {
		k, v := fmt.Sprintf("sm_rule_%02d", i), fmt.Sprintf("value %d with some length to it", i)
		rules[k], r[k] = v, v
	}
	sort.Strings(names)
	return map[string]any{
		"name": "Stock server ✓", "map": "de_dust2", "game": "Counter-Strike: Source", "folder": "cstrike",
		"version": "9540945", "max_players": 64, "players": players, "rules": r,
	}, names, rules
}

// waitPlayers waits up to 10 s for the front's state to have n players.
func waitPlayers(t *testing.T, d *daemontest.Daemon, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(d.Snapshot().Players) != n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the front has %d players, want %d", len(d.Snapshot().Players), n)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// A queryd in front of a stock A2S server (a second queryd answering A2S
// only) shows the stock server's state in every protocol it speaks: the
// same name, map, players, scores, bots and rules.
func TestFrontOfA2SServer(t *testing.T) {
	back := daemontest.Start(t, mods, onlyA2S)
	doc, names, rules := demanding()
	if _, err := back.Feed(t).Replace(doc); err != nil {
		t.Fatal(err)
	}
	front := daemontest.Start(t, mods, fmt.Sprintf("[upstream]\nprotocol = \"a2s\"\naddress = %q\ninterval = \"200ms\"\ntimeout = \"1s\"\n", back.UDP()))
	waitPlayers(t, front, 40)
	addr := front.UDP().String()

	t.Run("a2s", func(t *testing.T) {
		c, err := a2s.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		info, err := c.Info()
		if err != nil {
			t.Fatal(err)
		}
		if info.Name != "Stock server ✓" || info.Map != "de_dust2" || info.Folder != "cstrike" || info.Game != "Counter-Strike: Source" ||
			info.Version != "9540945" || info.Players != 40 || info.MaxPlayers != 64 || info.Bots != 2 {
			t.Errorf("info %+v", info)
		}
		ps, err := c.Players()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.Name)
			if strings.HasPrefix(p.Name, "BOT") != (p.Score == 1<<30) || (!strings.HasPrefix(p.Name, "BOT") && p.Duration < 99) {
				t.Errorf("player %+v", p)
			}
		}
		if !slices.Equal(sorted(got), names) {
			t.Errorf("players %q\nwant %q", sorted(got), names)
		}
		rs, err := c.Rules()
		if err != nil {
			t.Fatal(err)
		}
		gotRules := map[string]string{}
		for _, kv := range rs {
			gotRules[kv[0]] = kv[1]
		}
		for k, v := range rules {
			if gotRules[k] != v {
				t.Errorf("rule %s = %q, want %q", k, gotRules[k], v)
			}
		}
		if len(gotRules) != len(rules) {
			t.Errorf("%d rules, want the stock server's %d and no others: %v", len(gotRules), len(rules), gotRules)
		}
	})
	t.Run("gamespy4", func(t *testing.T) {
		c, err := gamespy4.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		f, err := c.Full()
		if err != nil {
			t.Fatal(err)
		}
		if f.Get("hostname") != "Stock server ✓" || f.Get("map") != "de_dust2" || f.Get("numplayers") != "40" || f.Get("maxplayers") != "64" {
			t.Errorf("keys %v", f.Keys)
		}
		// One datagram of 1,024 bytes: the first players of the state, in
		// its order, as many as fit (then rules, none here).
		var first []string
		for _, p := range front.Snapshot().Players[:len(f.Players)] {
			first = append(first, p.Name)
		}
		if len(f.Players) < 20 || !slices.Equal(f.Players, first) {
			t.Errorf("players %q\nwant the state's first %d: %q", f.Players, len(f.Players), first)
		}
		for _, kv := range f.Keys {
			if v, ok := rules[kv[0]]; ok && kv[1] != v {
				t.Errorf("rule %s = %q, want %q", kv[0], kv[1], v)
			}
		}
	})
	t.Run("sagl", func(t *testing.T) {
		c, err := sagl.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r, err := c.Info()
		if err != nil {
			t.Fatal(err)
		}
		in := r.Info
		if in.Name != "Stock server ✓" || in.Version != "9540945" || in.Players == nil || in.Players.Online != 40 || in.Players.Max != 64 {
			t.Fatalf("info %+v", in)
		}
		var got []string
		for _, p := range in.Players.List {
			got = append(got, p.Name)
		}
		if !slices.Equal(sorted(got), names) {
			t.Errorf("players %q", sorted(got))
		}
	})
	t.Run("quake3", func(t *testing.T) {
		c, err := quake3.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		st, err := c.Status()
		if err != nil {
			t.Fatal(err)
		}
		if st.Info.Get("sv_hostname") != "Stock server ✓" || st.Info.Get("mapname") != "de_dust2" || st.Info.Get("sv_maxclients") != "64" ||
			st.Info.Get("gamename") != "cstrike" || st.Info.Get("version") != "9540945" {
			t.Errorf("info %v", st.Info.Values)
		}
		var got []string
		for _, p := range st.Players {
			got = append(got, p.Name)
			if (p.Ping == 0) != strings.HasPrefix(p.Name, "BOT") {
				t.Errorf("player %+v: ping 0 is a bot, and only a bot", p)
			}
		}
		if !slices.Equal(sorted(got), names) {
			t.Errorf("players %q", sorted(got))
		}
		for k, v := range rules {
			if st.Info.Get(k) != v {
				t.Errorf("cvar %s = %q, want %q", k, st.Info.Get(k), v)
			}
		}
	})

	// A change on the stock server shows at the front by the next polls.
	if _, err := back.Feed(t).Patch(map[string]any{"map": "de_inferno", "players": map[string]any{"1": nil}}); err != nil {
		t.Fatal(err)
	}
	waitPlayers(t, front, 39)
	if m := front.Snapshot().Map; m != "de_inferno" {
		t.Errorf("map %q after the stock server changed it", m)
	}
	// The poller counts an answer after it published it: the state can show
	// before the count does.
	deadline := time.Now().Add(5 * time.Second)
	for front.Metric(t, "queryd_upstream_polls_total", upstream.OutcomeAnswered) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := front.Metric(t, "queryd_upstream_polls_total", upstream.OutcomeAnswered); n < 2 {
		t.Errorf("%v polls answered", n)
	}
}

// fakeQ3 is a scripted ioquake3-like server on loopback: it answers
// getstatus while up, and counts the getstatus it got (by whether they
// carry the flood's marker) and the other datagrams.
type fakeQ3 struct {
	addr                        string
	up                          atomic.Bool
	polls, flood, other, answer atomic.Int64
}

const floodMarker = "flood-marker"

func newFakeQ3(t *testing.T) *fakeQ3 {
	f := &fakeQ3{}
	f.up.Store(true)
	f.addr = udptest.Serve(t, func(req []byte, send func([]byte) bool) {
		const cmd = "\xFF\xFF\xFF\xFFgetstatus"
		switch {
		case bytes.Contains(req, []byte(floodMarker)):
			f.flood.Add(1)
			return
		case !bytes.HasPrefix(req, []byte(cmd)):
			f.other.Add(1)
			send([]byte("\xFF\xFF\xFF\xFFchallengeResponse 1 0 71"))
			return
		}
		f.polls.Add(1)
		if !f.up.Load() {
			return
		}
		f.answer.Add(1)
		ch := strings.TrimPrefix(string(req[len(cmd):]), " ")
		send([]byte("\xFF\xFF\xFF\xFFstatusResponse\n\\challenge\\" + ch +
			`\sv_hostname\^1fake ^7q3\mapname\q3dm17\sv_maxclients\12\gamename\baseoa\g_gametype\0` + "\n" +
			`3 50 "Ann"` + "\n" + `0 0 "Bot"` + "\n"))
	})
	return f
}

// startFront runs a front queryd with [feed] stale_after = after plus extra.
func startFront(t *testing.T, after, extra string) *daemontest.Daemon {
	t.Helper()
	path := daemontest.WriteConfig(t, daemontest.Dir(t), extra)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(b), `stale_after = "60s"`, `stale_after = "`+after+`"`, 1)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := daemontest.StartFile(t, mods, path)
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("the daemon stopped with an error: %v", err)
		}
	})
	return d
}

// readMaster waits up to 5 s for a datagram at the fake master.
func readMaster(t *testing.T, c *net.UDPConn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 2048)
	n, _, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("nothing at the master: %v", err)
	}
	return string(buf[:n])
}

func healthz(t *testing.T, d *daemontest.Daemon) int {
	t.Helper()
	resp, err := http.Get("http://" + d.AdminAddr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// queryStatus asks the front getstatus once, waiting up to wait.
func queryStatus(t *testing.T, addr netip.AddrPort, wait time.Duration) (*quake3.Status, error) {
	t.Helper()
	c, err := quake3.Dial(addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Timeout = wait
	return c.Status()
}

// The game server stops answering: after stale_after the front answers
// nothing, /healthz says 503 and the master gets the flatline; when it
// answers again, the front answers and the master gets a heartbeat.
func TestFrontStaleUpstream(t *testing.T) {
	t.Parallel() // waits on timeouts and processes, not on the CPU
	up := newFakeQ3(t)
	master, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	front := startFront(t, "1s", fmt.Sprintf(`
[upstream]
protocol = "quake3"
address = %q
interval = "100ms"
timeout = "200ms"
[quake3]
query_port_is_join_port = true
[[quake3.masters]]
address = %q
heartbeat = "QuakeArena-1"
flatline = "ETFlatline-1"
`, up.addr, master.LocalAddr()))
	if msg := readMaster(t, master); msg != "\xFF\xFF\xFF\xFFheartbeat QuakeArena-1\n" {
		t.Fatalf("first: %q", msg)
	}
	if st := askUntil(t, front.UDP()); st.Info.Get("sv_hostname") != "^1fake ^7q3" || len(st.Players) != 2 {
		t.Fatalf("the front before: %+v", st)
	}
	if code := healthz(t, front); code != http.StatusOK {
		t.Errorf("/healthz %d while the game server answers", code)
	}

	up.up.Store(false)
	if msg := readMaster(t, master); msg != "\xFF\xFF\xFF\xFFheartbeat ETFlatline-1\n" {
		t.Fatalf("stale: %q, want the flatline", msg)
	}
	if _, err := queryStatus(t, front.UDP(), 300*time.Millisecond); err == nil {
		t.Error("the front answered while the game server is silent")
	}
	if code := healthz(t, front); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz %d while stale, want 503", code)
	}
	if v := front.Metric(t, "queryd_upstream_stale", ""); v != 1 {
		t.Errorf("queryd_upstream_stale %v", v)
	}

	up.up.Store(true)
	if msg := readMaster(t, master); msg != "\xFF\xFF\xFF\xFFheartbeat QuakeArena-1\n" {
		t.Fatalf("back: %q, want a heartbeat", msg)
	}
	if st := askUntil(t, front.UDP()); len(st.Players) != 2 {
		t.Fatalf("the front after: %+v", st)
	}
	if n := front.Metric(t, "queryd_upstream_polls_total", upstream.OutcomeSilent); n < 1 {
		t.Errorf("%v silent polls counted", n)
	}
}

// Before the game server's first answer the front is silent (it has no
// state of the game server's to serve), and /healthz says so.
func TestFrontSilentUntilFirstAnswer(t *testing.T) {
	up := newFakeQ3(t)
	up.up.Store(false)
	front := startFront(t, "60s", fmt.Sprintf("[upstream]\nprotocol = \"quake3\"\naddress = %q\ninterval = \"100ms\"\ntimeout = \"100ms\"\n", up.addr))
	for deadline := time.Now().Add(5 * time.Second); up.polls.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no polls")
		}
	}
	if _, err := queryStatus(t, front.UDP(), 300*time.Millisecond); err == nil {
		t.Error("the front answered with [server] before the game server ever answered")
	}
	if code := healthz(t, front); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz %d, want 503", code)
	}
	up.up.Store(true)
	if st := askUntil(t, front.UDP()); st.Info.Get("mapname") != "q3dm17" {
		t.Fatalf("after the first answer: %v", st.Info.Values)
	}
}

// askUntil asks the front getstatus until it answers (a query sent while
// it is silent gets nothing, and UDP does not ask again), for up to 5 s.
func askUntil(t *testing.T, addr netip.AddrPort) *quake3.Status {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := queryStatus(t, addr, 200*time.Millisecond)
		if err == nil {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer within 5 s: %v", err)
		}
	}
}

// A flood of getstatus at the front (relay mode in front of the game
// server) is answered from the cache: none of it reaches the game server,
// which gets only the polls (and the datagrams queryd does not claim,
// relayed as before).
func TestFrontFloodDoesNotReachUpstream(t *testing.T) {
	up := newFakeQ3(t)
	front := startFront(t, "60s", fmt.Sprintf(`
[relay]
upstream = %q
[upstream]
protocol = "quake3"
interval = "200ms"
timeout = "500ms"
[quake3]
packet_rate = 0
[limits]
per_ip_rate = "64MiB"
per_ip_burst = "16MiB"
unproven_rate = "64MiB"
unproven_burst = "16MiB"
`, up.addr))
	askUntil(t, front.UDP())
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(front.UDP()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const flood = 2000
	answered := 0
	buf := make([]byte, 65536)
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i < flood && time.Now().Before(deadline); i++ {
		c.Write([]byte("\xFF\xFF\xFF\xFFgetstatus " + floodMarker + strconv.Itoa(i)))
		c.SetReadDeadline(time.Now().Add(time.Second))
		if n, err := c.Read(buf); err == nil && bytes.HasPrefix(buf[:n], []byte("\xFF\xFF\xFF\xFFstatusResponse")) {
			answered++
		}
	}
	// Datagrams queryd does not claim still go to the game server
	// (getchallenge within [quake3] pass_source_burst, 4 at once).
	for range quake3.DefaultPassSourceBurst {
		c.Write([]byte("\xFF\xFF\xFF\xFFgetchallenge"))
		c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := c.Read(buf); err != nil {
			t.Fatalf("relayed getchallenge: %v", err)
		}
	}
	if err := front.Stop(); err != nil {
		t.Fatal(err)
	}
	var polls float64
	for _, o := range upstream.Outcomes {
		polls += front.Metric(t, "queryd_upstream_polls_total", o)
	}
	t.Logf("flood: %d getstatus, %d answered by the front; the game server got %d polls (%v counted), %d relayed, %d of the flood",
		flood, answered, up.polls.Load(), polls, up.other.Load(), up.flood.Load())
	if answered < flood*99/100 {
		t.Errorf("the front answered %d of %d", answered, flood)
	}
	if up.flood.Load() != 0 {
		t.Errorf("%d flood datagrams reached the game server", up.flood.Load())
	}
	// A poll cut short by the stop was sent but not counted.
	if got := float64(up.polls.Load()); got < polls || got > polls+1 {
		t.Errorf("the game server got %v getstatus, the front counted %v polls", got, polls)
	}
	if n := up.other.Load(); n != quake3.DefaultPassSourceBurst {
		t.Errorf("%d datagrams relayed, want the %d getchallenge", n, quake3.DefaultPassSourceBurst)
	}
}

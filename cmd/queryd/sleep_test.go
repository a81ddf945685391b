package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/queryd/queryd/internal/testkit"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/sleep"
)

// gameServerEnv names the environment variable that makes
// TestSleepGameServer a game server: its address.
const gameServerEnv = "QUERYD_TEST_GAME_SERVER"

// TestSleepGameServer is not a test: it is the game server the sleep
// tests' start command runs (this test binary, in the background) and
// their stop command kills. It answers Quake 3 getinfo and getstatus
// (hostname "sleepy" on q3dm17, the players listed in the file
// $QUERYD_TEST_GAME_SERVER_PLAYERS, one "name ping" a line; ping 0 is a
// bot) and sends every other datagram back to its sender prefixed with
// "echo:" (the game's traffic).
func TestSleepGameServer(t *testing.T) {
	addr := os.Getenv(gameServerEnv)
	if addr == "" {
		t.Skip("the sleep tests' game server: run by their start command")
	}
	c, err := net.ListenPacket("udp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "game server:", err)
		os.Exit(3)
	}
	buf := make([]byte, 65535)
	for {
		n, src, err := c.ReadFrom(buf)
		if err != nil {
			os.Exit(4)
		}
		req := string(buf[:n])
		var out string
		switch {
		case strings.HasPrefix(req, "\xFF\xFF\xFF\xFFgetstatus"), strings.HasPrefix(req, "\xFF\xFF\xFF\xFFgetinfo"):
			out = gameStatus(req)
		default:
			out = "echo:" + req
		}
		c.WriteTo([]byte(out), src)
	}
}

// gameStatus is the helper game server's answer to getinfo or getstatus.
func gameStatus(req string) string {
	word, ch, _ := strings.Cut(strings.TrimPrefix(req, "\xFF\xFF\xFF\xFF"), " ")
	info := "\\challenge\\" + strings.TrimSpace(ch) + "\\sv_hostname\\sleepy\\mapname\\q3dm17\\sv_maxclients\\12\\gamename\\baseq3\\protocol\\68"
	b, _ := os.ReadFile(os.Getenv(gameServerEnv + "_PLAYERS"))
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if name, ping, ok := strings.Cut(l, " "); ok {
			lines = append(lines, fmt.Sprintf("0 %s %q\n", ping, name))
		}
	}
	if word == "getinfo" {
		return "\xFF\xFF\xFF\xFFinfoResponse\n" + info + "\\clients\\" + strconv.Itoa(len(lines))
	}
	return "\xFF\xFF\xFF\xFFstatusResponse\n" + info + "\n" + strings.Join(lines, "")
}

// sleepGame is the helper game server's world: its folder (the start and
// stop scripts, their log, its pid and players files) and address.
type sleepGame struct {
	dir, addr   string
	start, stop string
}

// newSleepGame writes the start and stop scripts of a game server at a
// free loopback port: start runs this test binary as the game server in
// the background (startBody, when set, replaces that), stop kills it; both
// log a line to dir/log.
func newSleepGame(t *testing.T, startBody string) *sleepGame {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh for the start and stop scripts")
	}
	g := &sleepGame{dir: testDir(t), addr: fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPPort(t))}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if startBody == "" {
		startBody = fmt.Sprintf("%s=%s %s_PLAYERS=%s/players %s -test.run '^TestSleepGameServer$' >/dev/null 2>&1 &\necho $! > %s/pid",
			gameServerEnv, g.addr, gameServerEnv, g.dir, self, g.dir)
	}
	g.start = g.script(t, "start", "echo start >> "+g.dir+"/log\n"+startBody)
	g.stop = g.script(t, "stop", "echo stop >> "+g.dir+"/log\n[ -f "+g.dir+"/pid ] && kill $(cat "+g.dir+"/pid)\nrm -f "+g.dir+"/pid\nexit 0")
	g.players("")
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(g.dir, "pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return g
}

func (g *sleepGame) script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(g.dir, name+".sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// players sets the players the game server lists ("name ping" lines).
func (g *sleepGame) players(lines ...string) {
	os.WriteFile(filepath.Join(g.dir, "players"), []byte(strings.Join(lines, "\n")), 0o644)
}

// runs counts the times the script what (start, stop) ran.
func (g *sleepGame) runs(what string) int {
	b, _ := os.ReadFile(filepath.Join(g.dir, "log"))
	return strings.Count(string(b), what+"\n")
}

// running reports whether the game server's process runs.
func (g *sleepGame) running() bool {
	b, err := os.ReadFile(filepath.Join(g.dir, "pid"))
	if err != nil {
		return false
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// config is the [sleep] table for g, with extra keys.
func (g *sleepGame) config(extra string) string {
	return fmt.Sprintf("[sleep]\nafter = \"1s\"\nstart = [%q]\nstop = [%q]\nready_timeout = \"15s\"\n%s", g.start, g.stop, extra)
}

// sleepPhase is the server's sleep phase now.
func sleepPhase(t *testing.T, d *daemontest.Daemon) sleep.Status {
	t.Helper()
	st, ok := d.Server("main").Sleep()
	if !ok {
		t.Fatal("no [sleep] cycle")
	}
	return st
}

// waitPhase waits up to limit for the server's sleep phase to be want.
func waitPhase(t *testing.T, d *daemontest.Daemon, want sleep.Phase, limit time.Duration) sleep.Status {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		st := sleepPhase(t, d)
		if st.Phase == want {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleep phase %s after %s, want %s: %+v", st.Phase, limit, want, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// healthBody reads /healthz: its status code and body.
func healthBody(t *testing.T, d *daemontest.Daemon) (int, map[string]any) {
	t.Helper()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + d.AdminAddr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

// getAdminJSON decodes the admin listener's JSON at path into v.
func getAdminJSON(t *testing.T, d *daemontest.Daemon, path string, v any) {
	t.Helper()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + d.AdminAddr() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil || res.StatusCode != 200 {
		t.Fatalf("%s: %d %v", path, res.StatusCode, err)
	}
}

// q3Status asks addr getstatus with queryd's Quake 3 client, once (a
// generous deadline: the machine is busy).
func q3Status(t *testing.T, addr string) *quake3.Status {
	t.Helper()
	st, err := q3StatusErr(addr)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// q3StatusErr asks addr getstatus once, waiting up to 5 s for the answer.
func q3StatusErr(addr string) (*quake3.Status, error) {
	c, err := quake3.Dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.Timeout = 5 * time.Second
	st, err := c.Status()
	if err != nil {
		return nil, fmt.Errorf("getstatus %s: %w", addr, err)
	}
	return st, nil
}

// waitAnswering waits for /healthz to say the server answers the game's
// state (its [upstream] poll answered, or a feeder sent state).
func waitAnswering(t *testing.T, d *daemontest.Daemon, limit time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		code, h := healthBody(t, d)
		if code == 200 && h["state"] == "answering" {
			t.Logf("answering %v after the daemon was up", time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > limit {
			t.Fatalf("/healthz after %v: %d %v", limit, code, h)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// everyProbe sends each module's probe request n times from one socket
// (the answers are read and dropped).
func everyProbe(t *testing.T, addr string, n int) int {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go io.Copy(io.Discard, c)
	sent := 0
	for _, m := range daemonModules() {
		p, ok := m.(interface{ Probe() module.Probe })
		if !ok {
			continue
		}
		req := p.Probe().Request
		for i := 0; i < n; i++ {
			c.Write(req)
			sent++
			if i%50 == 49 {
				time.Sleep(time.Millisecond) // loopback's buffers
			}
		}
	}
	return sent
}

// TestSleepRelay (issue 41) runs a game server (this binary: a Quake 3
// stand-in that echoes game datagrams) behind queryd in relay mode with
// [upstream] quake3, [sleep] after = "1s" and its start and stop scripts,
// and a master: with a player on, stop never runs; once only a bot is
// left, stop runs after after and the server is asleep (its process gone;
// /healthz 200 with "asleep":true; queryd_server_state{state="asleep"}); a
// heartbeat goes to the master while it is asleep, no flatline; queryd
// answers getstatus with its name and map and 0 players; 1,000 queries of
// every protocol, and queries of a protocol that is off, wake it 0 times;
// a client's getchallenge wakes it, and it and the client's next game
// datagrams reach the game server in order (their echoes come back); it
// sleeps again after after.
func TestSleepRelay(t *testing.T) {
	if testing.Short() {
		t.Skip("a game server started and stopped, floods of queries: -short")
	}
	g := newSleepGame(t, "")
	g.players("bot 0")
	if out, err := exec.Command(g.start).CombinedOutput(); err != nil { // it runs when queryd starts
		t.Fatalf("start: %v: %s", err, out)
	}
	waitGame(t, g.addr)
	master := heartbeatSink(t)
	d := startTestDaemon(t, writeConfig(t, testDir(t), fmt.Sprintf(`
[relay]
upstream = %q
[upstream]
protocol = "quake3"
interval = "500ms"
timeout = "500ms"
[quake3]
enabled = true
[[quake3.masters]]
address = %q
heartbeat = "QuakeArena-1"
flatline = "QuakeArena-1-Flatline"
[sqp]
enabled = false
[bedrock]
enabled = true
`, g.addr, master.addr)+g.config("")))
	front := d.UDP().String()

	g.players("bot 0", "Ann 40")
	// Until the [upstream] poll's first answer queryd is silent (reason
	// upstream_unanswered: the contract, issue 38); on a busy machine that
	// answer can come seconds after the start, so wait for /healthz to say
	// answering before asking the front.
	waitAnswering(t, d, 10*time.Second)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st, err := q3StatusErr(front)
		if err == nil && len(st.Players) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the front never showed the game server's 2 players: %v", err)
		}
	}
	time.Sleep(2500 * time.Millisecond) // after is 1 s: with a player on, nothing stops it
	if st := sleepPhase(t, d); st.Phase != sleep.Awake || g.runs("stop") != 0 {
		t.Fatalf("with a player on: %+v, stops %d", st, g.runs("stop"))
	}

	g.players("bot 0")
	st := waitPhase(t, d, sleep.Asleep, 10*time.Second)
	asleepAt := time.Now()
	if g.running() || g.runs("stop") != 1 {
		t.Fatalf("asleep: the game server runs %v, stops %d", g.running(), g.runs("stop"))
	}
	code, h := healthBody(t, d)
	if code != 200 || h["asleep"] != true || h["state"] != "asleep" || h["ok"] != true {
		t.Fatalf("/healthz asleep: %d %v", code, h)
	}
	if v := d.Metric(t, "queryd_server_state", "asleep"); v != 1 {
		t.Fatalf("queryd_server_state{state=asleep} = %v", v)
	}
	var doc struct {
		State struct{ State string } `json:"state"`
		Sleep struct {
			Phase       string     `json:"phase"`
			AsleepSince *time.Time `json:"asleep_since"`
		} `json:"sleep"`
	}
	getAdminJSON(t, d, "/status.json", &doc)
	if doc.State.State != "asleep" || doc.Sleep.Phase != "asleep" || doc.Sleep.AsleepSince == nil {
		t.Fatalf("/status.json asleep: %+v", doc)
	}
	t.Logf("asleep since %s (after = 1s)", st.AsleepSince.Format(time.StampMilli))

	s := q3Status(t, front)
	if s.Info.Get("sv_hostname") != "sleepy" || s.Info.Get("mapname") != "q3dm17" || len(s.Players) != 0 {
		t.Fatalf("asleep, getstatus: %q on %q, %d players", s.Info.Get("sv_hostname"), s.Info.Get("mapname"), len(s.Players))
	}
	ac, err := a2s.Dial(front)
	if err != nil {
		t.Fatal(err)
	}
	info, err := ac.Info()
	ac.Close()
	if err != nil || info.Name != "sleepy" || info.Map != "q3dm17" || info.Players != 0 {
		t.Fatalf("asleep, A2S_INFO: %+v, %v", info, err)
	}
	if !master.heartbeatAfter(asleepAt.Add(-time.Second), 10*time.Second) {
		t.Error("no heartbeat went to the master while asleep")
	}
	if n := master.flatlines(); n != 0 {
		t.Errorf("%d flatlines to the master: a sleeping server is no dead one", n)
	}

	sent := everyProbe(t, front, 1000)
	sqpQuery := []byte{0, 0, 0, 0, 0} // [sqp] is off: relayed while awake, a query all the same
	qc, err := net.Dial("udp", front)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		qc.Write(sqpQuery)
	}
	qc.Close()
	time.Sleep(500 * time.Millisecond)
	if st := sleepPhase(t, d); st.Phase != sleep.Asleep || st.Wakes["join"] != 0 || g.runs("start") != 1 {
		t.Fatalf("%d queries and 1,000 SQP ones woke it: %+v, starts %d", sent, st, g.runs("start"))
	}
	if v := d.Metric(t, "queryd_sleep_dropped_total", "query"); v != 2000 { // everyProbe's SQP probes, and these
		t.Errorf("SQP queries while asleep: %v dropped as queries, want 2000", v)
	}
	t.Logf("%d probes of the %d protocols (SQP off) and 1,000 more SQP queries while asleep: 0 wakes", sent, len(daemonModules()))

	client, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(d.UDP()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	joined := time.Now()
	for _, m := range []string{"\xFF\xFF\xFF\xFFgetchallenge", "game 1", "game 2"} {
		client.Write([]byte(m))
	}
	var got []string
	buf := make([]byte, 2048)
	client.SetReadDeadline(time.Now().Add(15 * time.Second))
	for len(got) < 3 {
		n, err := client.Read(buf)
		if err != nil {
			t.Fatalf("the held datagrams' echoes: got %q: %v (sleep %+v)", got, err, sleepPhase(t, d))
		}
		if len(got) == 0 {
			t.Logf("wake: %s from the join datagram to the game server's answer", time.Since(joined).Round(time.Millisecond))
		}
		got = append(got, string(buf[:n]))
	}
	if want := []string{"echo:\xFF\xFF\xFF\xFFgetchallenge", "echo:game 1", "echo:game 2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("echoes %q, want %q: the held datagrams in the order they came", got, want)
	}
	if st := sleepPhase(t, d); st.Wakes["join"] != 1 || g.runs("start") != 2 || !g.running() {
		t.Fatalf("after the join: %+v, starts %d", st, g.runs("start"))
	}
	if code, h := healthBody(t, d); code != 200 || h["asleep"] != false || h["state"] != "answering" {
		t.Fatalf("/healthz awake: %d %v", code, h)
	}
	waitPhase(t, d, sleep.Asleep, 10*time.Second)
	if g.runs("stop") != 2 || g.running() {
		t.Fatalf("asleep again: stops %d, running %v", g.runs("stop"), g.running())
	}
}

// waitGame waits up to 10 s for the game server at addr to answer.
func waitGame(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, _ := quake3.Dial(addr)
		c.Timeout = 200 * time.Millisecond
		_, err := c.Status()
		c.Close()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the game server at %s does not answer: %v", addr, err)
		}
	}
}

// master is a UDP socket standing in for a Quake 3 master: it records the
// heartbeats and flatlines it gets, with their times.
type master struct {
	addr string
	mu   sync.Mutex
	got  []masterDatagram
}

type masterDatagram struct {
	at   time.Time
	text string
}

func heartbeatSink(t *testing.T) *master {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m := &master{addr: c.LocalAddr().String()}
	go func() {
		buf := make([]byte, 2048)
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			m.mu.Lock()
			m.got = append(m.got, masterDatagram{time.Now(), string(buf[:n])})
			m.mu.Unlock()
		}
	}()
	return m
}

// heartbeatAfter waits up to limit for a heartbeat that came after t0.
func (m *master) heartbeatAfter(t0 time.Time, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		m.mu.Lock()
		for _, d := range m.got {
			if d.at.After(t0) && d.text == "\xFF\xFF\xFF\xFFheartbeat QuakeArena-1\n" {
				m.mu.Unlock()
				return true
			}
		}
		m.mu.Unlock()
	}
	return false
}

func (m *master) flatlines() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, d := range m.got {
		if strings.Contains(d.text, "Flatline") {
			n++
		}
	}
	return n
}

// TestSleepFed (issue 41): a fed server (no relay: its game's feeder and
// matchmaking talk to queryd) sleeps after after with no players (stop
// runs); the feed's wake, over the socket and over HTTP, runs start, and
// the wake is done when the feeder speaks; stop runs again after after. A
// wake is no feed activity.
func TestSleepFed(t *testing.T) {
	if testing.Short() {
		t.Skip("start and stop commands run: -short")
	}
	g := newSleepGame(t, "touch $(dirname $0)/up")
	g.stop = g.script(t, "stop", "echo stop >> "+g.dir+"/log\nrm -f "+g.dir+"/up")
	dir := testDir(t)
	d := startTestDaemon(t, withFeedKeys(t, dir, feedHTTPConfig(t, dir, "127.0.0.1:0", feedToken), g.config("")))
	fc := d.Feed(t)
	if _, err := fc.Replace(map[string]any{"name": "fed", "map": "m1", "players": map[string]any{"1": map[string]any{"name": "Ann"}}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if st := sleepPhase(t, d); st.Phase != sleep.Awake {
		t.Fatalf("with a player: %+v", st)
	}
	if _, err := fc.Replace(map[string]any{"name": "fed", "map": "m1"}); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, d, sleep.Asleep, 10*time.Second)
	if g.runs("stop") != 1 {
		t.Fatalf("stops %d", g.runs("stop"))
	}
	last := d.Server("main").Silence()
	if last.State != daemon.StateAsleep {
		t.Fatalf("silence %+v", last)
	}

	for i, wake := range []func() error{
		func() error { _, err := fc.Wake(); return err },
		func() error {
			code, rep := feedRequest(t, "POST", d.FeedHTTPAddr(), "/v1/wake", feedToken, "")
			if code != 200 {
				return fmt.Errorf("POST /v1/wake: %d %v", code, rep)
			}
			return nil
		},
	} {
		woke := time.Now()
		if err := wake(); err != nil {
			t.Fatalf("wake %d: %v", i, err)
		}
		waitPhase(t, d, sleep.Waking, 5*time.Second)
		for deadline := time.Now().Add(10 * time.Second); !fileExists(filepath.Join(g.dir, "up")); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("wake %d: start did not run", i)
			}
		}
		time.Sleep(300 * time.Millisecond)
		if st := sleepPhase(t, d); st.Phase != sleep.Waking {
			t.Fatalf("wake %d: not ready before the feeder speaks: %+v", i, st)
		}
		if _, err := fc.Ping(); err != nil { // the game's feeder, up again
			t.Fatal(err)
		}
		waitPhase(t, d, sleep.Idle, 5*time.Second)
		t.Logf("wake %d: %s from the wake to the feeder's first word", i, time.Since(woke).Round(time.Millisecond))
		waitPhase(t, d, sleep.Asleep, 10*time.Second)
		if g.runs("start") != i+1 || g.runs("stop") != i+2 {
			t.Fatalf("wake %d: starts %d, stops %d", i, g.runs("start"), g.runs("stop"))
		}
	}
	if st := sleepPhase(t, d); st.Wakes["feed"] != 2 {
		t.Fatalf("wakes %v", st.Wakes)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestSleepWakeFails (issue 41): a start that exits non-zero, one that
// hangs, and one that starts a game server that never answers: each is
// logged with its reason and the command's output, start runs once, and
// the server is asleep again and answers its last state (getstatus: its
// name, 0 players; /healthz asleep).
func TestSleepWakeFails(t *testing.T) {
	if testing.Short() {
		t.Skip("start commands that fail and time out: -short")
	}
	for _, tc := range []struct{ reason, body, out string }{
		{sleep.FailStart, "echo no such unit mygame@1 >&2; exit 5", "no such unit mygame@1"},
		{sleep.FailStartTimeout, "echo starting; sleep 60", "starting"},
		{sleep.FailNotReady, "echo started a server that never answers", "never answers"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			t.Parallel()
			g := newSleepGame(t, "")
			g.players("bot 0")
			if out, err := exec.Command(g.start).CombinedOutput(); err != nil {
				t.Fatalf("start: %v: %s", err, out)
			}
			waitGame(t, g.addr)
			g.start = g.script(t, "start", "echo start >> "+g.dir+"/log\n"+tc.body)
			var logs bytes.Buffer
			var logMu sync.Mutex
			path := writeConfig(t, testDir(t), fmt.Sprintf("[relay]\nupstream = %q\n[upstream]\nprotocol = \"quake3\"\ninterval = \"500ms\"\ntimeout = \"500ms\"\n[quake3]\nenabled = true\n", g.addr)+
				strings.Replace(g.config(""), `ready_timeout = "15s"`, `ready_timeout = "3s"`, 1))
			cfg, err := config.Load(path, daemon.ConfigModules(daemonModules())...)
			if err != nil {
				t.Fatal(err)
			}
			d := daemontest.StartLogged(t, daemonModules(), cfg, path, slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil)))
			t.Cleanup(func() { d.Stop() })
			waitPhase(t, d, sleep.Asleep, 10*time.Second)
			c, err := net.Dial("udp", d.UDP().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write([]byte("\xFF\xFF\xFF\xFFgetchallenge"))
			deadline := time.Now().Add(20 * time.Second)
			for {
				st := sleepPhase(t, d)
				if st.Failures[tc.reason] == 1 && st.Phase == sleep.Asleep && strings.Contains(st.LastFailure.Output, tc.out) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%+v", st)
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond)
			if g.runs("start") != 2 || g.runs("stop") != 2 { // the test's own start, the wake's; the sleep's stop, the clean-up
				t.Fatalf("starts %d stops %d", g.runs("start"), g.runs("stop"))
			}
			if s := q3Status(t, d.UDP().String()); s.Info.Get("sv_hostname") != "sleepy" || len(s.Players) != 0 {
				t.Fatalf("after the failed wake: %q, %d players", s.Info.Get("sv_hostname"), len(s.Players))
			}
			if code, h := healthBody(t, d); code != 200 || h["asleep"] != true {
				t.Fatalf("/healthz: %d %v", code, h)
			}
			logMu.Lock()
			text := logs.String()
			logMu.Unlock()
			if !strings.Contains(text, "reason="+tc.reason) || !strings.Contains(text, tc.out) {
				t.Fatalf("log:\n%s", text)
			}
		})
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestSleepStartsAsleep (issue 41): queryd started while the game server
// does not run (restarted while it slept): once ready_timeout has passed
// without an answer it runs stop (to make sure) and is asleep, answering
// [server] with 0 players, instead of staying silent for after; a join
// then wakes it.
func TestSleepStartsAsleep(t *testing.T) {
	if testing.Short() {
		t.Skip("start and stop commands run: -short")
	}
	g := newSleepGame(t, "")
	started := time.Now()
	d := startTestDaemon(t, writeConfig(t, testDir(t), fmt.Sprintf("[relay]\nupstream = %q\n[upstream]\nprotocol = \"quake3\"\ninterval = \"500ms\"\ntimeout = \"500ms\"\n[quake3]\nenabled = true\n", g.addr)+
		strings.Replace(strings.Replace(g.config(""), `after = "1s"`, `after = "1h"`, 1), `ready_timeout = "15s"`, `ready_timeout = "2s"`, 1)))
	waitPhase(t, d, sleep.Asleep, 15*time.Second)
	t.Logf("asleep %s after queryd started (ready_timeout 2s, after 1h)", time.Since(started).Round(100*time.Millisecond))
	if g.runs("stop") != 1 || g.runs("start") != 0 {
		t.Fatalf("stops %d, starts %d", g.runs("stop"), g.runs("start"))
	}
	if s := q3Status(t, d.UDP().String()); s.Info.Get("sv_hostname") != "config name" || len(s.Players) != 0 {
		t.Fatalf("asleep after a restart: %q, %d players", s.Info.Get("sv_hostname"), len(s.Players))
	}
	c, err := net.Dial("udp", d.UDP().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("\xFF\xFF\xFF\xFFgetchallenge"))
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	buf := make([]byte, 512)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "echo:\xFF\xFF\xFF\xFFgetchallenge" {
		t.Fatalf("the join: %q, %v", buf[:max(n, 0)], err)
	}
	if s := q3Status(t, d.UDP().String()); s.Info.Get("sv_hostname") != "sleepy" {
		t.Fatalf("awake: %q", s.Info.Get("sv_hostname"))
	}
}

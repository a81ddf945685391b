package interop

import (
	"encoding/json"
	"fmt"
	"github.com/queryd/queryd/internal/testkit"
	"net"
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
	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/sagl"
	"github.com/queryd/queryd/sqp"
)

// sleepOA is Debian's openarena-server as [sleep] runs it: start and stop
// scripts in dir (start launches it in the background with one bot,
// writing its pid; stop kills it and waits for it to go), their log, its
// address.
type sleepOA struct {
	dir, addr   string
	start, stop string
}

// newSleepOA writes the scripts, for a game server on a free port of
// 127.0.0.1. It skips the test where openarena-server is not installed.
func newSleepOA(t *testing.T) *sleepOA {
	t.Helper()
	return newSleepOAAt(t, fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPPort(t)))
}

// newSleepOAAt is newSleepOA for a game server at addr (an IPv4 address
// and port): the scripts run it in the namespace they run in.
func newSleepOAAt(t *testing.T, addr string) *sleepOA {
	t.Helper()
	bin, err := exec.LookPath("openarena-server")
	if err != nil {
		if bin, err = exec.LookPath("/usr/games/openarena-server"); err != nil {
			t.Skip("openarena-server is not installed (apt-get install openarena-server): skipped")
		}
	}
	NeedCommand(t, "sh")
	o := &sleepOA{dir: t.TempDir(), addr: addr}
	home := filepath.Join(o.dir, "home")
	ip, port := o.addr[:strings.LastIndexByte(o.addr, ':')], o.addr[strings.LastIndexByte(o.addr, ':')+1:]
	o.start = o.script(t, "start", fmt.Sprintf(`echo start >> %[1]s/log
HOME=%[2]s %[3]s +set dedicated 1 +set net_enabled 1 +set net_ip %[5]s +set net_port %[4]s \
  +set sv_hostname sleepy-oa +set sv_maxclients 12 +set bot_minplayers 1 +set sv_master1 "" \
  +set com_homepath %[2]s +map oa_dm1 >> %[1]s/oa.log 2>&1 &
echo $! > %[1]s/pid`, o.dir, home, bin, port, ip))
	o.stop = o.script(t, "stop", fmt.Sprintf(`echo stop >> %[1]s/log
pid=$(cat %[1]s/pid 2>/dev/null) || exit 0
kill $pid 2>/dev/null
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
kill -9 $pid 2>/dev/null
rm -f %[1]s/pid
exit 0`, o.dir))
	t.Cleanup(func() {
		if pid := o.pid(); pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return o
}

func (o *sleepOA) script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(o.dir, name+".sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func (o *sleepOA) pid() int {
	b, err := os.ReadFile(filepath.Join(o.dir, "pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// running reports whether OpenArena's process runs.
func (o *sleepOA) running() bool {
	pid := o.pid()
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// runs counts the times the script what (start, stop) ran.
func (o *sleepOA) runs(what string) int {
	b, _ := os.ReadFile(filepath.Join(o.dir, "log"))
	return strings.Count(string(b), what+"\n")
}

func (o *sleepOA) output() string {
	b, _ := os.ReadFile(filepath.Join(o.dir, "oa.log"))
	return string(b)
}

// waitBot waits until OpenArena answers getstatus with its bot on.
func (o *sleepOA) waitBot(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		c, err := quake3.Dial(o.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Timeout = 500 * time.Millisecond
		st, err := c.Status()
		c.Close()
		if err == nil && len(st.Players) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("OpenArena did not answer with its bot within 90 s: %v\n%s", err, o.output())
		}
	}
}

// sleepHealth is /healthz's asleep and state.
func sleepHealth(t *testing.T, d *Daemon) (asleep bool, state string) {
	t.Helper()
	resp, err := d.HTTPClient(2 * time.Second).Get("http://" + d.AdminAddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Asleep bool   `json:"asleep"`
		State  string `json:"state"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("/healthz: %d %v", resp.StatusCode, err)
	}
	if h.Asleep && resp.StatusCode != 200 {
		t.Fatalf("/healthz: %d while asleep", resp.StatusCode)
	}
	return h.Asleep, h.State
}

// waitAsleep waits up to limit for the sleep cycle to be in the phase
// asleep (stop done: /healthz says asleep from the stop's start) and
// returns when it was; /healthz then says asleep.
func waitAsleep(t *testing.T, d *Daemon, limit time.Duration) time.Time {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(50 * time.Millisecond) {
		if d.Metric(t, `queryd_sleep_phase{phase="asleep",server="main"}`) == 1 {
			if asleep, state := sleepHealth(t, d); !asleep || state != "asleep" {
				t.Fatalf("asleep, /healthz says asleep %v, state %q", asleep, state)
			}
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("not asleep after %s", limit)
		}
	}
}

// oaMaster is a UDP socket standing in for a master: it keeps the times
// of the heartbeats and flatlines it gets.
type oaMaster struct {
	conn *net.UDPConn
	mu   sync.Mutex
	got  []masterLine
}

type masterLine struct {
	at   time.Time
	text string
}

func newOAMaster(t *testing.T) *oaMaster {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m := &oaMaster{conn: c}
	go func() {
		buf := make([]byte, 2048)
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			m.mu.Lock()
			m.got = append(m.got, masterLine{time.Now(), string(buf[:n])})
			m.mu.Unlock()
		}
	}()
	return m
}

func (m *oaMaster) count(after time.Time, word string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, l := range m.got {
		if l.at.After(after) && strings.Contains(l.text, word) {
			n++
		}
	}
	return n
}

// allProbes are every protocol module's probe request, on or off in the
// test's config.
func allProbes() map[string][]byte {
	out := map[string][]byte{}
	for _, m := range []interface {
		Name() string
		Probe() module.Probe
	}{a2s.Module{}, gamespy4.Module{}, sagl.Module{}, quake3.Module{}, bedrock.Module{}, sqp.Module{}} {
		out[m.Name()] = m.Probe().Request
	}
	return out
}

// TestSleepOpenArena (issue 41): Debian's openarena-server (one bot, no
// players) behind queryd in relay mode with [upstream] quake3 and [sleep]
// after = "3s", started and stopped by the test's scripts: it is put to
// sleep 3 s after queryd starts (its process gone); a master gets a
// heartbeat while it sleeps (the state's bot went with it: a change of
// fill), no flatline; qstat and gamedig read its name and map; 1,000
// queries of every protocol (a2s, gamespy4, sagl and quake3 on; bedrock
// and sqp off) wake it 0 times; a Quake 3 client's getchallenge wakes it,
// and OpenArena's challengeResponse reaches the client within
// ready_timeout plus one retry; the client never joins, and it sleeps
// again. The wake's time is logged.
func TestSleepOpenArena(t *testing.T) {
	if testing.Short() {
		t.Skip("a real OpenArena server started and stopped: -short")
	}
	NeedCommand(t, "quakestat")
	o := newSleepOA(t)
	if out, err := exec.Command(o.start).CombinedOutput(); err != nil { // it runs when queryd starts
		t.Fatalf("start: %v: %s", err, out)
	}
	o.waitBot(t)
	master := newOAMaster(t)
	const readyTimeout = 30 * time.Second
	d := StartDaemon(t, Options{
		Protocols: map[string]map[string]any{
			"a2s": nil, "gamespy4": nil, "sagl": nil,
			"quake3": {"masters": []map[string]any{{
				"address": master.conn.LocalAddr().String(), "heartbeat": "QuakeArena-1", "flatline": "QuakeArena-1-Flatline"}}},
		},
		Tables: map[string]map[string]any{
			"relay":    {"upstream": o.addr},
			"upstream": {"protocol": "quake3", "interval": "1s", "timeout": "1s"},
			"sleep": {"after": "3s", "start": []string{o.start}, "stop": []string{o.stop},
				"ready_timeout": readyTimeout.String(), "wakes_per_hour": 6},
		},
	})
	started := time.Now()
	asleepAt := waitAsleep(t, d, 30*time.Second)
	t.Logf("asleep %s after queryd started (after = 3s, the poll every 1s)", asleepAt.Sub(started).Round(100*time.Millisecond))
	if o.running() || o.runs("stop") != 1 {
		t.Fatalf("asleep: OpenArena runs %v, stops %d", o.running(), o.runs("stop"))
	}
	if v := d.Metric(t, `queryd_server_state{reason="",server="main",state="asleep"}`); v != 1 {
		t.Fatalf("queryd_server_state asleep %v", v)
	}

	r := RunCmd(t, 30*time.Second, "", "quakestat", "-q3s", d.UDPAddr, "-R", "-P", "-json", "-nnx")
	var servers []q3QstatServer
	if r.Err != nil || json.Unmarshal([]byte(r.Stdout), &servers) != nil || len(servers) != 1 {
		t.Fatalf("qstat while asleep: %v\n%s", r.Err, r.Stdout)
	}
	s := servers[0]
	if s.Status != "online" || s.Name != "sleepy-oa" || s.Map != "oa_dm1" || s.NumPlayers != 0 || s.MaxPlayers != 12 {
		t.Fatalf("qstat while asleep: %+v", s)
	}
	g := RunGamedig(t, "quake3", d.UDPAddr, nil)
	var gd q3GamedigResult
	if g.Err != nil || json.Unmarshal([]byte(g.Stdout), &gd) != nil || gd.Name != "sleepy-oa" || gd.Map != "oa_dm1" || len(gd.Players) != 0 {
		t.Fatalf("gamedig while asleep: %v %+v\n%s", g.Err, gd, g.Stdout)
	}
	t.Logf("asleep, OpenArena's process gone: qstat %q on %s %d/%d, gamedig %q on %s", s.Name, s.Map, s.NumPlayers, s.MaxPlayers, gd.Name, gd.Map)
	for deadline := time.Now().Add(10 * time.Second); master.count(asleepAt.Add(-time.Second), "heartbeat QuakeArena-1\n") == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no heartbeat to the master while asleep")
		}
	}
	if n := master.count(time.Time{}, "Flatline"); n != 0 {
		t.Fatalf("%d flatlines to the master", n)
	}

	c, err := net.Dial("udp", d.UDPAddr)
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, req := range allProbes() {
		for i := 0; i < 1000; i++ {
			c.Write(req)
			sent++
			if i%50 == 49 {
				time.Sleep(time.Millisecond)
			}
		}
	}
	c.Close()
	time.Sleep(time.Second)
	if asleep, _ := sleepHealth(t, d); !asleep || o.runs("start") != 1 || d.Metric(t, `queryd_sleep_wakes_total{cause="join",server="main"}`) != 0 {
		t.Fatalf("%d queries woke it: asleep %v, starts %d", sent, asleep, o.runs("start"))
	}
	t.Logf("%d queries (1,000 of each of the 6 protocols, 2 of them off) while asleep: 0 wakes", sent)

	var took []time.Duration
	for i := 1; i <= 3; i++ {
		took = append(took, joinOA(t, d.UDPAddr, readyTimeout, o))
		if o.runs("start") != i+1 || d.Metric(t, `queryd_sleep_wakes_total{cause="join",server="main"}`) != float64(i) {
			t.Fatalf("join %d: starts %d", i, o.runs("start"))
		}
		waitAsleep(t, d, 60*time.Second) // the client never joins: asleep again
		if o.runs("stop") != i+1 || o.running() {
			t.Fatalf("asleep again: stops %d, running %v", o.runs("stop"), o.running())
		}
	}
	t.Logf("wakes: OpenArena's challengeResponse reached the client %v after its getchallenge", took)
	t.Logf("asleep again after each client left; %v wakes in all", d.Metric(t, `queryd_sleep_wakes_total{cause="join",server="main"}`))
}

// joinOA sends getchallenge to addr as a Quake 3 client does, once and
// then once more, and returns how long OpenArena's challengeResponse took
// to come: within ready_timeout plus one retry, or the test fails.
func joinOA(t *testing.T, addr string, readyTimeout time.Duration, o *sleepOA) time.Duration {
	t.Helper()
	client, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var got string
	joined := time.Now()
	buf := make([]byte, 2048)
	for try := 0; try < 2 && !strings.HasPrefix(got, "\xFF\xFF\xFF\xFFchallengeResponse "); try++ {
		client.Write([]byte("\xFF\xFF\xFF\xFFgetchallenge"))
		wait := readyTimeout
		if try == 1 {
			wait = 5 * time.Second // one retry
		}
		client.SetReadDeadline(time.Now().Add(wait))
		for !strings.HasPrefix(got, "\xFF\xFF\xFF\xFFchallengeResponse ") {
			n, err := client.Read(buf)
			if err != nil {
				break
			}
			got = string(buf[:n])
		}
	}
	took := time.Since(joined)
	if !strings.HasPrefix(got, "\xFF\xFF\xFF\xFFchallengeResponse ") {
		t.Fatalf("getchallenge: got %q within ready_timeout and a retry\nOpenArena:\n%s", got, o.output())
	}
	return took.Round(time.Millisecond)
}

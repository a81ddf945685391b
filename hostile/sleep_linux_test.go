package hostile

import (
	"fmt"
	"github.com/queryd/queryd/internal/testkit"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleepGameServer is a Quake 3 stand-in for [sleep] to start and stop: a
// python3 script answering getstatus and getinfo (no players), run in the
// background by start.sh (its pid in dir/pid) and killed by stop.sh; both
// log a line to dir/log.
type sleepGameServer struct {
	dir, addr, start, stop string
}

const sleepGamePy = `import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
while True:
    b, a = s.recvfrom(65535)
    if b.startswith(b"\xff\xff\xff\xffgetstatus") or b.startswith(b"\xff\xff\xff\xffgetinfo"):
        ch = b.split(b" ", 1)[1].strip() if b" " in b else b""
        s.sendto(b"\xff\xff\xff\xffstatusResponse\n\\challenge\\" + ch + b"\\sv_hostname\\flooded\\mapname\\q3dm17\\sv_maxclients\\12\n", a)
`

func newSleepGameServer(t *testing.T) *sleepGameServer {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the sleep flood's game server is a python3 script")
	}
	g := &sleepGameServer{dir: t.TempDir(), addr: fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPPort(t))}
	port := g.addr[strings.LastIndexByte(g.addr, ':')+1:]
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(g.dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	script := write("game.py", sleepGamePy, 0o644)
	g.start = write("start.sh", fmt.Sprintf("#!/bin/sh\necho start >> %[1]s/log\n%[2]s %[3]s %[4]s >/dev/null 2>&1 &\necho $! > %[1]s/pid\n", g.dir, py, script, port), 0o755)
	g.stop = write("stop.sh", fmt.Sprintf("#!/bin/sh\necho stop >> %[1]s/log\n[ -f %[1]s/pid ] && kill $(cat %[1]s/pid)\nrm -f %[1]s/pid\nexit 0\n", g.dir), 0o755)
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(g.dir, "pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return g
}

func (g *sleepGameServer) runs(what string) int {
	b, _ := os.ReadFile(filepath.Join(g.dir, "log"))
	return strings.Count(string(b), what+"\n")
}

// sleepPhase is the daemon's sleep phase, from queryd_sleep_phase.
func sleepPhase(m Metrics) string {
	for _, s := range m {
		if s.Name == "queryd_sleep_phase" && s.Value == 1 {
			return s.Labels["phase"]
		}
	}
	return ""
}

// TestSleepFlood (issue 41): a spoofed flood of game datagrams (what no
// protocol claims: a Quake 3 getchallenge padded to 1,200 bytes) from
// 10,000 sources at a sleeping relay-mode server (after = 1s,
// wakes_per_hour = 3), about 20,000 a second until wakes are refused (at
// most 2 minutes): the game server is started at most 3 times (by queryd's
// count and the start script's own), the rest of the flood is refused
// (no_wake), and what the wakes held stays within hold_total and
// hold_bytes (sampled every 100 ms). The figures (wakes, the most held,
// RSS) are logged for hostile/README.md.
func TestSleepFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood from 10,000 sources for up to 2 minutes: -short")
	}
	if why := rawSupported(); why != "" {
		t.Skip(why)
	}
	g := newSleepGameServer(t)
	if out, err := exec.Command(g.start).CombinedOutput(); err != nil {
		t.Fatalf("start: %v: %s", err, out)
	}
	const wakes = 3
	d := StartDaemon(t, Tables{
		"relay":    {"upstream": g.addr},
		"upstream": {"protocol": "quake3", "interval": "500ms", "timeout": "500ms"},
		"sleep": {"after": "1s", "start": []string{g.start}, "stop": []string{g.stop}, "ready_timeout": "10s",
			"wakes_per_hour": wakes},
	})
	for deadline := time.Now().Add(20 * time.Second); sleepPhase(d.Metrics(t)) != "asleep"; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not asleep: %q\n%s", sleepPhase(d.Metrics(t)), d.Output())
		}
	}
	rss0, _ := d.RSS(t)
	dst := netip.MustParseAddrPort(d.UDPAddr)
	raw, err := newRawSender(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	stop := make(chan struct{})
	sampled := make(chan [3]float64, 1)
	go func() { // the most held, and RSS, every 100 ms
		var most [3]float64
		for {
			select {
			case <-stop:
				sampled <- most
				return
			case <-time.After(100 * time.Millisecond):
			}
			m := d.Metrics(t)
			most[0] = max(most[0], m.Sum("queryd_sleep_held_datagrams"))
			most[1] = max(most[1], m.Sum("queryd_sleep_held_bytes"))
			rss, _ := d.RSS(t)
			most[2] = max(most[2], float64(rss))
		}
	}()
	payload := []byte("\xFF\xFF\xFF\xFFgetchallenge " + strings.Repeat("x", 1200-17))
	sent := 0
	begin := time.Now()
	for time.Since(begin) < 2*time.Minute && d.Metrics(t).Sum("queryd_sleep_wakes_refused_total") == 0 {
		for i := 0; i < 10_000; i++ {
			src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 3, byte(i >> 8), byte(i)}), uint16(20000+i%1000))
			if err := raw.Send(src, payload); err != nil {
				t.Fatal(err)
			}
			sent++
			if i%500 == 499 {
				time.Sleep(20 * time.Millisecond) // about 20,000 a second
			}
		}
	}
	close(stop)
	most := <-sampled
	time.Sleep(time.Second)
	m := d.Metrics(t)
	woke, refused := m.Sum("queryd_sleep_wakes_total", "cause", "join"), m.Sum("queryd_sleep_wakes_refused_total")
	noWake, heldOver := m.Sum("queryd_sleep_dropped_total", "reason", "no_wake"), m.Sum("queryd_sleep_dropped_total", "reason", "held_over")
	t.Logf("%d game datagrams from 10,000 spoofed sources in %s: %v wakes (wakes_per_hour %d), %v refused, %v dropped (no wake), %v dropped from the hold (past its bounds); the start script ran %d times",
		sent, time.Since(begin).Round(time.Second), woke, wakes, refused, noWake, heldOver, g.runs("start")-1)
	t.Logf("held at most %v datagrams and %v bytes (hold_total 1024, hold_bytes 1 MiB: 1,280-byte allocations); RSS %.1f MiB before the flood, at most %.1f MiB during it (race detector: %v)",
		most[0], most[1], mib(rss0), mib(int64(most[2])), *flagRace)
	if woke < 1 || woke > wakes || g.runs("start")-1 > wakes {
		t.Errorf("%v wakes, the start script ran %d times: want 1 to %d", woke, g.runs("start")-1, wakes)
	}
	if refused == 0 || noWake == 0 {
		t.Errorf("the flood past the hour's wakes was not refused: refused %v, no_wake %v", refused, noWake)
	}
	if most[0] > 1024 || most[1] > 1<<20 {
		t.Errorf("held %v datagrams, %v bytes: past hold_total or hold_bytes", most[0], most[1])
	}
	if grew := int64(most[2]) - rss0; grew > rssBound() {
		t.Errorf("RSS grew %.1f MiB in the flood, more than %.0f MiB", mib(grew), mib(rssBound()))
	}
	if d.Exited() {
		t.Fatalf("queryd exited: %s", d.Output())
	}
}

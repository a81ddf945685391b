package hostile

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/testkit/querydtest"
)

// a2sInfoRequest is A2S_INFO without a challenge (25 bytes).
var a2sInfoRequest = []byte("\xff\xff\xff\xffTSource Engine Query\x00")

// udpProbe asks A2S_INFO (with its challenge) once a millisecond from one
// socket and records each round trip with the time it was sent.
type udpProbe struct {
	mu    sync.Mutex
	at    []time.Time
	rtt   []time.Duration
	lost  int
	conn  net.Conn
	token []byte
}

func newUDPProbe(t testing.TB, addr string) *udpProbe {
	t.Helper()
	c, err := net.Dial("udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &udpProbe{conn: c}
}

// run asks until ctx ends.
func (p *udpProbe) run(ctx context.Context) {
	buf := make([]byte, 2048)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for ctx.Err() == nil {
		<-tick.C
		req := append(slices.Clip(a2sInfoRequest), p.token...)
		start := time.Now()
		p.conn.SetDeadline(start.Add(time.Second))
		if _, err := p.conn.Write(req); err != nil {
			continue
		}
		n, err := p.conn.Read(buf)
		rtt := time.Since(start)
		switch {
		case err != nil:
			p.mu.Lock()
			p.lost++
			p.mu.Unlock()
		case n == 9 && buf[4] == 'A': // a challenge: ask again with it
			p.token = bytes.Clone(buf[5:9])
		case n > 5 && buf[4] == 'I':
			p.mu.Lock()
			p.at, p.rtt = append(p.at, start), append(p.rtt, rtt)
			p.mu.Unlock()
		}
	}
}

// p99 is the 99th percentile of the round trips sent in [from, to).
func (p *udpProbe) p99(from, to time.Time) (time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var in []time.Duration
	for i, at := range p.at {
		if !at.Before(from) && at.Before(to) {
			in = append(in, p.rtt[i])
		}
	}
	if len(in) == 0 {
		return 0, 0
	}
	slices.Sort(in)
	return in[len(in)*99/100], len(in)
}

// statusReaders are 32 clients, each from its own loopback address (so
// each has its own per-client rate), fetching /status.json in a loop over
// keep-alive connections while on is set. They run in a process of their
// own (this test binary again, TestAdminStatusReaders), so that the UDP
// probe's goroutine does not wait behind them for this process's CPUs.
type statusReaders struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

// The readers' ways of loading the admin listener (TestAdminStatusLoad).
const (
	readersDistinct = "distinct" // 32 keep-alive clients, each from its own address, on /status.json
	readersOne      = "one"      // 32 keep-alive clients from 127.0.0.1 on /status.json (most over the rate)
	readersFresh    = "fresh"    // a new connection from a new address for every /status.json
	readersHealthz  = "healthz"  // 32 keep-alive clients from 127.0.0.1 on /healthz (no address rate)
)

// startReaders starts the readers' process against addr, paused.
func startReaders(t testing.TB, addr, mode string) *statusReaders {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAdminStatusReaders$", "-hostile.bin="+querydBin)
	cmd.Env = append(os.Environ(), "HOSTILE_READERS="+addr, "HOSTILE_READERS_MODE="+mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	return &statusReaders{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
}

// set turns the readers on or off and returns their counts so far:
// answered, refused (429), failed, bytes read.
func (s *statusReaders) set(t testing.TB, on bool) (ok, tooMany, failed, nb int64) {
	t.Helper()
	cmd := "off\n"
	if on {
		cmd = "on\n"
	}
	if _, err := io.WriteString(s.stdin, cmd); err != nil {
		t.Fatal(err)
	}
	for s.out.Scan() {
		if n, _ := fmt.Sscanf(s.out.Text(), "counts %d %d %d %d", &ok, &tooMany, &failed, &nb); n == 4 {
			return
		}
	}
	t.Fatalf("the readers' process ended: %v", s.out.Err())
	return
}

// TestAdminStatusReaders is TestAdminStatusLoad's readers' process (it
// runs only with HOSTILE_READERS set): 32 clients asking in a loop, the way
// HOSTILE_READERS_MODE says, while "on", each line of stdin switching
// them, each answered with the counts.
func TestAdminStatusReaders(t *testing.T) {
	addr := os.Getenv("HOSTILE_READERS")
	if addr == "" {
		t.Skip("the readers' process of TestAdminStatusLoad")
	}
	mode := os.Getenv("HOSTILE_READERS_MODE")
	path := "/status.json"
	if mode == readersHealthz {
		path = "/healthz"
	}
	var on atomic.Bool
	var ok, tooMany, failed, nb atomic.Int64
	var fresh atomic.Uint32
	for i := 0; i < 32; i++ {
		ip := net.IPv4(127, 0, 1, byte(i+1))
		if mode == readersOne || mode == readersHealthz {
			ip = net.IPv4(127, 0, 0, 1)
		}
		dialer := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: ip}}
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: 1}}
		go func() {
			for {
				if !on.Load() {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				if mode == readersFresh { // every request from a new address of 127.2.0.0/16
					k := fresh.Add(1)
					d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 2, byte(k>>8), byte(k))}}
					client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
				}
				res, err := client.Get("http://" + addr + path)
				if err != nil {
					failed.Add(1)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				n, _ := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				nb.Add(n)
				switch res.StatusCode {
				case 200:
					ok.Add(1)
				case http.StatusTooManyRequests:
					tooMany.Add(1)
				default:
					failed.Add(1)
				}
			}
		}()
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		on.Store(in.Text() == "on")
		fmt.Printf("counts %d %d %d %d\n", ok.Load(), tooMany.Load(), failed.Load(), nb.Load())
	}
}

// cpuTicks is the process's user plus system CPU time in clock ticks
// (/proc/PID/stat, 100 a second).
func cpuTicks(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// loadRound is one idle and one loaded phase's figures.
type loadRound struct {
	idleP99, loadP99 time.Duration
	idleN, loadN     int
	idleCPU, loadCPU float64 // the daemon's CPU, cores
}

// TestAdminStatusLoad (issue 24 §4, issue 39 §5): 32 clients fetching
// /status.json in a loop used to take 137 % of a core (the document was
// encoded for every request) and raised the UDP answers' p99 from 0.65 ms
// to 17.8 ms; with the document encoded once a second and each address
// held to its rate, 32 clients of one address still got 10,000 immediate
// 429s a second, and 32 from fresh addresses (a loopback user has 16
// million) were not held at all: p99 17-31 ms. Now all addresses together
// are held to 100 requests a second, a refusal comes only after a second's
// wait, and one connection may ask /healthz 5 times a second: in every
// way of loading it (readersDistinct, readersOne, readersFresh,
// readersHealthz) the A2S_INFO round trip's p99 with the 32 readers stays
// within 2x of its p99 without them. The daemon is built without the race
// detector for this test (plainBin): its instrumentation multiplies the
// cost of the HTTP path several times and says nothing of a real build's
// latency. On a machine others load too, the
// phases are interleaved (idle, loaded, loaded, idle, 0.75 s each:
// 750 probes, the p99 their eighth slowest; 2 rounds) and the medians
// of the phases' p99s are compared; a comparison that fails is repeated up
// to twice with fresh rounds.
func TestAdminStatusLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("about 30 s of load: -short")
	}
	bin, err := plainBin()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{readersDistinct, readersOne, readersFresh, readersHealthz} {
		t.Run(mode, func(t *testing.T) { adminStatusLoad(t, bin, mode) })
	}
}

// adminStatusLoad is TestAdminStatusLoad with the readers in mode.
func adminStatusLoad(t *testing.T, bin, mode string) {
	d := newDaemon(t, nil)
	d.Bin = bin
	d.Start(t)
	probe := newUDPProbe(t, d.UDPAddr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var probeDone sync.WaitGroup
	probeDone.Add(1)
	go func() { defer probeDone.Done(); probe.run(ctx) }()
	readers := startReaders(t, d.AdminAddr, mode)
	defer func() { cancel(); probeDone.Wait() }()
	time.Sleep(500 * time.Millisecond) // the probe has its token

	const phase, settle = 750 * time.Millisecond, 200 * time.Millisecond
	measure := func(loaded bool) (time.Duration, int, float64) {
		readers.set(t, loaded)
		time.Sleep(settle)
		from, c0 := time.Now(), cpuTicks(t, d.Pid())
		time.Sleep(phase)
		to, c1 := time.Now(), cpuTicks(t, d.Pid())
		p, n := probe.p99(from, to)
		return p, n, float64(c1-c0) / 100 / to.Sub(from).Seconds()
	}
	var verdict string
	for attempt := 1; attempt <= 3; attempt++ {
		ok0, many0, failed0, bytes0 := readers.set(t, false)
		start := time.Now()
		var rounds []loadRound
		for i := 0; i < 2; i++ {
			var r loadRound
			if i%2 == 0 {
				r.idleP99, r.idleN, r.idleCPU = measure(false)
				r.loadP99, r.loadN, r.loadCPU = measure(true)
			} else {
				r.loadP99, r.loadN, r.loadCPU = measure(true)
				r.idleP99, r.idleN, r.idleCPU = measure(false)
			}
			rounds = append(rounds, r)
		}
		ok1, many1, failed1, bytes1 := readers.set(t, false)
		loadedFor := time.Duration(len(rounds)) * (phase + settle)
		ok, many, failed, nb := ok1-ok0, many1-many0, failed1-failed0, bytes1-bytes0
		var idle, load []time.Duration
		var idleCPU, loadCPU float64
		for i, r := range rounds {
			t.Logf("attempt %d round %d: idle p99 %v (%d answers, daemon %.0f %% of a core); with 32 readers p99 %v (%d answers, daemon %.0f %%)",
				attempt, i, r.idleP99.Round(time.Microsecond), r.idleN, 100*r.idleCPU, r.loadP99.Round(time.Microsecond), r.loadN, 100*r.loadCPU)
			idle, load = append(idle, r.idleP99), append(load, r.loadP99)
			idleCPU, loadCPU = idleCPU+r.idleCPU/2, loadCPU+r.loadCPU/2
		}
		mi, ml := median(idle), median(load)
		verdict = fmt.Sprintf("attempt %d (%v): median p99 idle %v, with 32 readers %v (%.2fx); /status.json answered %.0f/s (%.1f KiB each), refused (429) %.0f/s, %d failed; daemon CPU %.0f %% idle, %.0f %% loaded; probe lost %d",
			attempt, time.Since(start).Round(time.Second), mi.Round(time.Microsecond), ml.Round(time.Microsecond), float64(ml)/float64(mi),
			float64(ok)/loadedFor.Seconds(), float64(nb)/float64(max(ok, 1))/1024, float64(many)/loadedFor.Seconds(), failed, 100*idleCPU, 100*loadCPU, probe.lost)
		t.Log(verdict)
		if min(rounds[0].idleN, rounds[0].loadN) < 200 {
			t.Fatalf("too few UDP answers to measure (%d, %d)", rounds[0].idleN, rounds[0].loadN)
		}
		if ok+many == 0 {
			t.Fatal("no request answered: the load did not happen")
		}
		if ml <= 2*mi {
			return
		}
	}
	t.Errorf("the UDP answers' p99 with 32 /status.json readers is over 2x its p99 without them: %s", verdict)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// plainBin is cmd/queryd built without the race detector, once per test
// binary (the daemon the other tests run is race-enabled): the binary
// latency figures are measured on. With -hostile.race=false or
// -hostile.bin it is that binary.
func plainBin() (string, error) {
	if !*flagRace || *flagBin != "" {
		return querydBin, nil
	}
	return querydtest.Build{}.Path()
}

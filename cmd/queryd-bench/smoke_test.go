package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
)

// resultLine is the format of the machine-readable last line.
var resultLine = regexp.MustCompile(`^RESULT proto=[a-z0-9_]+ answered_per_s=\d+ p50_us=\d+\.\d p99_us=\d+\.\d ` +
	`cpu_us_per_reply=(\d+\.\d{3}|na) gen_cpu_us_per_reply=(\d+\.\d{3}|na) answered=\d+ requests=\d+ lost=\d+ stray=\d+ ` +
	`challenges=\d+ bytes_in=\d+ bytes_out=\d+ dgrams_in=\d+ seconds=\d+\.\d{3}$`)

// startServer runs a responder with handler h on 127.0.0.1:0.
func startServer(t *testing.T, cfg responder.Config, h responder.Handler) netip.AddrPort {
	t.Helper()
	cfg.Listen = []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}
	cfg.Logger = slog.New(slog.DiscardHandler)
	srv, err := responder.New(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Close() })
	return srv.Addrs()[0]
}

// startFixed runs the fixed-reply handler h on queryd's socket layer alone,
// on 127.0.0.1:0, as "queryd-bench fixed" does.
func startFixed(t *testing.T, h *fixedHandler) netip.AddrPort {
	t.Helper()
	srv, err := responder.NewSockets(responder.SocketConfig{Listen: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, Logger: slog.New(slog.DiscardHandler)}, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Close() })
	return srv.Addrs()[0]
}

// openLimits keep the budgets on but out of the way of the load.
var openLimits = responder.Limits{PerIPRate: 1 << 30, PerIPBurst: 1 << 20, UnprovenRate: 1 << 30, UnprovenBurst: 1 << 20, TrackedIPs: 1024}

// load runs the load subcommand and returns the RESULT line's fields.
func load(t *testing.T, args ...string) map[string]string {
	t.Helper()
	var out, errb bytes.Buffer
	if rc := run(append([]string{"load"}, args...), &out, &errb); rc != 0 {
		t.Fatalf("load %v: exit %d\n%s%s", args, rc, out.String(), errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !resultLine.MatchString(last) {
		t.Fatalf("last line is not a RESULT line:\n%s", last)
	}
	f := map[string]string{}
	for _, kv := range strings.Fields(last)[1:] {
		k, v, _ := strings.Cut(kv, "=")
		f[k] = v
	}
	return f
}

func num(t *testing.T, f map[string]string, k string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(f[k], 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", k, f[k], err)
	}
	return v
}

func TestLoadAgainstFixedServer(t *testing.T) {
	addr := startFixed(t, newFixedHandler(120, 1))
	f := load(t, "-target", addr.String(), "-proto", "a2s_info", "-sources", "4", "-inflight", "8",
		"-duration", "700ms", "-pid", strconv.Itoa(osPid()))
	if num(t, f, "answered") == 0 || num(t, f, "answered_per_s") == 0 {
		t.Fatalf("no answers: %v", f)
	}
	// The fixed server sends no challenge: every answer is one 120-byte datagram.
	if num(t, f, "challenges") != 0 || num(t, f, "bytes_in") != 120*num(t, f, "dgrams_in") {
		t.Fatalf("unexpected replies: %v", f)
	}
	if f["cpu_us_per_reply"] == "na" {
		t.Fatalf("CPU not measured: %v", f)
	}
}

func TestLoadCountsMultiDatagramAnswers(t *testing.T) {
	addr := startFixed(t, newFixedHandler(200, 3))
	f := load(t, "-target", addr.String(), "-proto", "sagl_info", "-sources", "2", "-inflight", "4", "-count", "400", "-duration", "3s")
	// 400 token-bearing requests plus each source's first (token) request,
	// which the fixed server answers too.
	if num(t, f, "requests") != 402 || num(t, f, "answered") != 402 || num(t, f, "dgrams_in") != 3*402 {
		t.Fatalf("want 402 answers of 3 datagrams: %v", f)
	}
}

// fakeClock is a clock the test moves forward while the server runs.
type fakeClock struct{ skew atomic.Int64 }

func (c *fakeClock) now() time.Time { return time.Now().Add(time.Duration(c.skew.Load())) }

// benchState is 64 players, as bench/run.sh feeds queryd.
func benchState(t *testing.T) *state.Snapshot {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"name":"smoke","map":"m","max_players":64,"players":{`)
	for i := 0; i < 64; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"%d":{"name":"Player_%03d","score":%d,"ping":%d}`, i, i, i, 20+i)
	}
	b.WriteString(`}}`)
	doc, err := state.DecodeJSON([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.NewStore(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st.Snapshot()
}

// TestLoadAgainstA2S runs the generator against queryd's A2S path (responder
// with budgets and metrics, a2s handler) and moves the token clock on by two
// minutes mid-run: every source must take a challenge again and go on.
func TestLoadAgainstA2S(t *testing.T) {
	clk := &fakeClock{}
	h := a2s.NewHandler(a2s.Config{AppID: a2s.DefaultAppID, Protocol: a2s.DefaultProtocol, InfoChallenge: true}, challenge.NewWithKey([16]byte{1}, clk.now), nil)
	h.Update(benchState(t))
	addr := startServer(t, responder.Config{Limits: openLimits}, h)
	time.AfterFunc(400*time.Millisecond, func() { clk.skew.Store(int64(2 * time.Minute)) })
	f := load(t, "-target", addr.String(), "-proto", "a2s_info", "-sources", "4", "-inflight", "8", "-duration", "900ms")
	if num(t, f, "answered") == 0 {
		t.Fatalf("no answers: %v", f)
	}
	if num(t, f, "challenges") < 8 {
		t.Fatalf("want a challenge per source at the start and after the tokens expired: %v", f)
	}
}

// TestLoadGameSpy4Rechallenges: GameSpy4 ignores a stale token silently; the
// generator must give up on the ignored requests and handshake again.
func TestLoadGameSpy4Rechallenges(t *testing.T) {
	clk := &fakeClock{}
	h := gamespy4.NewHandler(gamespy4.Config{}, challenge.NewWithKey([16]byte{2}, clk.now))
	h.Update(benchState(t))
	addr := startServer(t, responder.Config{Limits: openLimits}, h)
	time.AfterFunc(300*time.Millisecond, func() { clk.skew.Store(int64(2 * time.Minute)) })
	// 1.2 s after the skew: on a loaded machine a source's handshake again
	// (after its ignored requests time out) took longer than the 600 ms
	// there were.
	f := load(t, "-target", addr.String(), "-proto", "gs4_full", "-sources", "2", "-inflight", "4",
		"-duration", "1500ms", "-timeout", "50ms")
	if num(t, f, "challenges") < 4 || num(t, f, "lost") == 0 {
		t.Fatalf("want a second handshake per source after ignored requests: %v", f)
	}
}

func TestLoadAgainstNaiveServer(t *testing.T) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { naiveLoop(conn, newFixedReply(64, 2)); close(done) }()
	defer func() { conn.Close(); <-done }()
	f := load(t, "-target", conn.LocalAddr().String(), "-proto", "q3_status", "-sources", "2", "-inflight", "4", "-count", "200", "-duration", "3s")
	if num(t, f, "answered") != 200 || num(t, f, "dgrams_in") != 400 || num(t, f, "bytes_in") != 400*64 {
		t.Fatalf("want 200 answers of 2 datagrams of 64 bytes: %v", f)
	}
}

func TestLoadReportsAMissingServerProcess(t *testing.T) {
	var out, errb bytes.Buffer
	// A pid that cannot exist (above the kernel's pid_max limit).
	rc := run([]string{"load", "-target", "127.0.0.1:9", "-sources", "1", "-duration", "100ms", "-timeout", "50ms", "-pid", "99999999"}, &out, &errb)
	if rc != 1 || !strings.Contains(errb.String(), "/proc/99999999/stat") {
		t.Fatalf("exit %d, stderr %q", rc, errb.String())
	}
}

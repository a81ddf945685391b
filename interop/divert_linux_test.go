package interop

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/internal/netnstest"
	"github.com/queryd/queryd/internal/testkit"
	"github.com/queryd/queryd/state"
)

// divertGame is the stand-in game server's address in the test network.
var divertGame = netip.AddrPortFrom(netnstest.ServerAddr4, 27015)

// standIn is a stock game server stand-in: it answers A2S itself (queryd's
// own a2s handler over RichState, so its PLAYER and RULES replies are
// split) and echoes every other datagram as "ECHO <source> <bytes>",
// recording who sent what.
type standIn struct {
	c       *net.UDPConn
	mute    atomic.Bool // ignore A2S queries (a game server that stopped answering)
	mu      sync.Mutex
	queries []netip.AddrPort // sources of the A2S queries it received
	others  []netip.AddrPort // sources of everything else
}

// The stand-in's A2S_INFO app id (CS:GO's; its low byte is above 200, see
// interop-notes on qstat) and protocol byte: not queryd's defaults, so a
// front that says them says the stand-in's.
const (
	standInAppID    = 730
	standInProtocol = 16
)

func startStandIn(t *testing.T, ns string, at netip.AddrPort) *standIn {
	t.Helper()
	return startStandInNamed(t, ns, at, RichState().Name)
}

// startStandInNamed is startStandIn with the server name name; ns "" is
// the test's own network namespace.
func startStandInNamed(t *testing.T, ns string, at netip.AddrPort, name string) *standIn {
	t.Helper()
	st := RichState()
	st.Name = name
	doc, err := state.Normalize(st.Doc())
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.NewStore(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	issuer, err := challenge.New(time.Now)
	if err != nil {
		t.Fatal(err)
	}
	h := a2s.NewHandler(a2s.Config{AppID: standInAppID, Protocol: standInProtocol, InfoChallenge: true, GamePort: at.Port()}, issuer, nil)
	h.Update(store.Snapshot())
	s := &standIn{}
	listen := func() (err error) {
		s.c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(at))
		return err
	}
	if ns == "" { // this namespace: on loopback, say
		err = listen()
	} else {
		err = netnstest.Do(ns, listen)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.c.Close() })
	go s.serve(h)
	return s
}

func (s *standIn) serve(h *a2s.Handler) {
	buf, scratch := make([]byte, 65536), make([]byte, 1<<20)
	var out [][]byte
	for {
		n, src, err := s.c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		p := buf[:n]
		if h.Claims(p) {
			s.mu.Lock()
			s.queries = append(s.queries, src)
			s.mu.Unlock()
			if s.mute.Load() {
				continue
			}
			out, _ = h.Answer(p, src, scratch, out[:0])
			for _, d := range out {
				s.c.WriteToUDPAddrPort(d, src)
			}
			continue
		}
		s.mu.Lock()
		s.others = append(s.others, src)
		s.mu.Unlock()
		s.c.WriteToUDPAddrPort(append([]byte("ECHO "+src.String()+" "), p...), src)
	}
}

// from counts the recorded sources at address a.
func (s *standIn) from(list *[]netip.AddrPort, a netip.Addr) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, src := range *list {
		if src.Addr() == a {
			n++
		}
	}
	return n
}

// rulesOf is an A2S_RULES answer as a map.
func rulesOf(rules [][2]string) map[string]string {
	m := make(map[string]string, len(rules))
	for _, kv := range rules {
		m[kv[0]] = kv[1]
	}
	return m
}

// divertStaleAfter is [feed] stale_after in the divert tests.
const divertStaleAfter = 3 * time.Second

// divertOptions is queryd diverting the game server at game in the test
// network's server namespace, its state from [upstream] (the game server's
// own address, from the same host: not through the XDP interface).
func divertOptions(n *netnstest.Net, game netip.AddrPort, protocol string, protos map[string]map[string]any) Options {
	return Options{
		Netns:     n.ServerNS,
		Protocols: protos,
		Tables: map[string]map[string]any{
			"listen":   {"udp": nil, "divert": []string{game.String()}},
			"upstream": {"protocol": protocol, "address": game.String(), "interval": "1s", "timeout": "800ms"},
			"feed":     {"stale_after": divertStaleAfter.String()},
			"xdp":      {"interfaces": []string{n.ServerIf}, "mode": "native"},
		},
	}
}

// divertGameDatagrams reach an A2S game server through divert ([upstream]
// a2s, the other protocols on by default): game traffic, A2S 0x71 (a
// connect), datagrams that begin as a query of a protocol does (issue 39
// item 7: a Quake 3 client's whose sequence number starts FE FD, SAGQ),
// and whole queries of protocols divert does not take (by default the
// [upstream] protocol's alone).
var divertGameDatagrams = [][]byte{
	[]byte("game packet \x01\x02"),
	[]byte("\xFF\xFF\xFF\xFFq\x00\x00\x00\x00"),
	[]byte("\xFE\xFD\x09\x00\x39\x30\x5A\x5A\x5A\x5A\x5A"),
	[]byte("SAGQ game bytes \x01\x02"),
	{0xFE, 0xFD, 0x09, 0x01, 0x02, 0x03, 0x04}, // a GameSpy4 handshake
	[]byte("\xFF\xFF\xFF\xFFgetinfo"),          // Quake 3
}

// divertAttaches are the two ways divert's egress program is attached:
// tcx (Linux 6.6) and, forced here by the daemon's test-only environment
// (xdp's envDivertClsact), the tc clsact filter of older kernels.
var divertAttaches = []struct {
	name string
	env  []string
}{{"tcx", nil}, {"clsact", []string{"QUERYD_TEST_DIVERT_CLSACT=1"}}}

// tcFilters is `tc filter show dev IF egress` in namespace ns.
func tcFilters(t *testing.T, ns, ifc string) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "tc", "filter", "show", "dev", ifc, "egress").CombinedOutput()
	if err != nil {
		t.Fatalf("tc filter show: %v: %s", err, out)
	}
	return string(out)
}

// TestDivertStandIn (issue 27; issue 40: through each attach of the egress
// program, tcx and the tc clsact filter, which tc lists while queryd runs
// and no longer once it stopped): queryd diverts a stand-in stock server's
// port. From the client's namespace A2S_INFO, A2S_PLAYER and A2S_RULES
// (46 players, the suite's rules: split over several datagrams, through
// the socket path and the egress rewrite) are answered with the stand-in's
// state, on a connected socket (a reply from another port would not reach
// it); the stand-in receives no query from the client, only the poller's
// (from its own address, not through the XDP interface); game datagrams,
// an A2S 0x71 connect request and other protocols' queries from the
// client (divertGameDatagrams) reach the stand-in from the client's real
// address and port, and its answers reach the client.
// When the stand-in stops answering the poller, past stale_after the
// client's queries get no answer and still never reach it.
func TestDivertStandIn(t *testing.T) {
	clientCheck(t, "queryd_go_a2s", "divert")
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skip("needs tc(8) (iproute2) to see the egress filter: skipped")
	}
	for _, a := range divertAttaches {
		t.Run(a.name, func(t *testing.T) { testDivertStandIn(t, a.env) })
	}
}

func testDivertStandIn(t *testing.T, env []string) {
	n := netnstest.New(t)
	stand := startStandIn(t, n.ServerNS, divertGame)
	opts := divertOptions(n, divertGame, "a2s", map[string]map[string]any{"a2s": nil})
	opts.Env = env
	d := StartDaemon(t, opts)
	want := RichState()
	clsact := env != nil
	if f := tcFilters(t, n.ServerNS, n.ServerIf); strings.Contains(f, "queryd_divert_tc") != clsact {
		t.Errorf("tc filter show egress (clsact %v):\n%s", clsact, f)
	}
	defer func() {
		d.Stop()
		if f := tcFilters(t, n.ServerNS, n.ServerIf); strings.Contains(f, "queryd_divert_tc") {
			t.Errorf("queryd stopped, its tc filter stays:\n%s", f)
		}
	}()

	var info *a2s.Info
	var players []a2s.PlayerInfo
	var rules [][2]string
	err := netnstest.Do(n.ClientNS, func() error {
		c, err := a2s.Dial(divertGame.String())
		if err != nil {
			return err
		}
		defer c.Close()
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			info, err = c.Info()
			if err == nil && info.Name == want.Name {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("A2S_INFO: %v %+v, want the stand-in's name %q", err, info, want.Name)
			}
		}
		if players, err = c.Players(); err != nil {
			return fmt.Errorf("A2S_PLAYER: %w", err)
		}
		if rules, err = c.Rules(); err != nil {
			return fmt.Errorf("A2S_RULES: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEq(t, "map", info.Map, want.Map)
	checkEq(t, "players", len(players), len(want.Players))
	if got := rulesOf(rules); !maps.Equal(got, want.Rules) { // the stand-in's own, and no others (issue 38)
		t.Errorf("%d rules, want the stand-in's %d and no others", len(rules), len(want.Rules))
	}
	if info.AppID != standInAppID || info.Protocol != standInProtocol {
		t.Errorf("A2S_INFO app id %d, protocol %d: want the stand-in's %d, %d", info.AppID, info.Protocol, standInAppID, standInProtocol)
	}
	t.Logf("through divert: %q on %s, %d players, %d rules", info.Name, info.Map, len(players), len(rules))

	if got := stand.from(&stand.queries, netnstest.ClientAddr4); got != 0 {
		t.Errorf("the stand-in received %d queries from the client: divert let them through", got)
	}
	if got := stand.from(&stand.queries, netnstest.ServerAddr4); got == 0 {
		t.Error("the stand-in received no poll from queryd's [upstream]")
	}

	// Game traffic and the connect challenge: to the stand-in, from the
	// client's own address and port.
	err = netnstest.Do(n.ClientNS, func() error {
		c, err := net.DialUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netnstest.ClientAddr4, 0)), net.UDPAddrFromAddrPort(divertGame))
		if err != nil {
			return err
		}
		defer c.Close()
		me := c.LocalAddr().(*net.UDPAddr).AddrPort()
		for _, p := range divertGameDatagrams {
			c.Write(p)
			buf := make([]byte, 2048)
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			m, err := c.Read(buf)
			if err != nil {
				return fmt.Errorf("%q: no answer from the game server: %w", p, err)
			}
			if wantEcho := append([]byte("ECHO "+me.String()+" "), p...); !bytes.Equal(buf[:m], wantEcho) {
				return fmt.Errorf("%q: got %q, want %q (the game server sees the client's own address)", p, buf[:m], wantEcho)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := stand.from(&stand.others, netnstest.ClientAddr4); got != len(divertGameDatagrams) {
		t.Errorf("the stand-in got %d game datagrams from the client, want %d", got, len(divertGameDatagrams))
	}
	xdpN := d.Metric(t, `queryd_xdp_diverted_total{result="xdp",server="main"}`)
	sock := d.Metric(t, `queryd_xdp_diverted_total{result="socket",server="main"}`)
	passed := d.Metric(t, `queryd_xdp_diverted_total{result="passed",server="main"}`)
	rewritten := d.Metric(t, "queryd_xdp_divert_rewritten_total")
	t.Logf("diverted: %v answered by the program, %v by the socket path (%v replies given the game port back), %v passed to the game server", xdpN, sock, rewritten, passed)
	if xdpN == 0 || sock == 0 || rewritten == 0 || passed < float64(len(divertGameDatagrams)) {
		t.Errorf("queryd_xdp_diverted_total xdp %v socket %v passed %v, rewritten %v: want the program and the socket path to answer, and %d passed", xdpN, sock, passed, rewritten, len(divertGameDatagrams))
	}

	// Stale: the game server stops answering the poller; once stale_after
	// has passed, the client's queries get no answer and still do not reach
	// the game server.
	stand.mute.Store(true)
	time.Sleep(divertStaleAfter + 1500*time.Millisecond)
	droppedBefore := d.Metric(t, `queryd_xdp_diverted_total{result="dropped",server="main"}`)
	socketBefore := d.Metric(t, `queryd_xdp_diverted_total{result="socket",server="main"}`)
	err = netnstest.Do(n.ClientNS, func() error {
		c, err := net.DialUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netnstest.ClientAddr4, 0)), net.UDPAddrFromAddrPort(divertGame))
		if err != nil {
			return err
		}
		defer c.Close()
		for _, q := range []string{"\xFF\xFF\xFF\xFFTSource Engine Query\x00", "\xFF\xFF\xFF\xFFU\xFF\xFF\xFF\xFF", "\xFF\xFF\xFF\xFFV\xFF\xFF\xFF\xFF", "\xFF\xFF\xFF\xFFW"} {
			c.Write([]byte(q))
			buf := make([]byte, 2048)
			c.SetReadDeadline(time.Now().Add(time.Second))
			if m, err := c.Read(buf); err == nil {
				return fmt.Errorf("%q answered while stale: %q", q, buf[:m])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := stand.from(&stand.queries, netnstest.ClientAddr4); got != 0 {
		t.Errorf("stale: the stand-in received %d queries from the client", got)
	}
	dropped := d.Metric(t, `queryd_xdp_diverted_total{result="dropped",server="main"}`) - droppedBefore
	socket := d.Metric(t, `queryd_xdp_diverted_total{result="socket",server="main"}`) - socketBefore
	t.Logf("stale: of 4 queries the program dropped %v and handed %v to the (silent) socket path", dropped, socket)
	if dropped+socket != 4 {
		t.Errorf("stale: %v dropped + %v to the socket path, want the 4 queries", dropped, socket)
	}
}

// TestDivertRefused (issue 27): divert without [xdp] is a config error
// naming what it needs and relay mode; without the privileges XDP needs
// (run as nobody, or as a non-root user) the start is refused with the
// reason instead of serving on the socket path; `queryd check` says what
// divert needs.
func TestDivertRefused(t *testing.T) {
	dir, err := os.MkdirTemp("", "qddiv") // not t.TempDir: nobody must reach it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := dir + "/" + name
		if err := writeFile(p, body); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := fmt.Sprintf("[feed]\nsocket = %q\n[admin]\nlisten = \"127.0.0.1:0\"\n[a2s]\nenabled = true\n[listen]\ndivert = [\"127.0.0.1:%d\"]\n", dir+"/f.sock", testkit.FreeUDPPort(t))
	noXDP := write("noxdp.toml", base)
	r := RunCmd(t, 20*time.Second, "", querydBin, "-config", noXDP)
	if r.Err == nil || !strings.Contains(r.Stderr, "divert needs [xdp] interfaces") || !strings.Contains(r.Stderr, "relay mode") {
		t.Errorf("without [xdp]: %v\n%s", r.Err, r.Stderr)
	}
	withXDP := write("xdp.toml", base+"[xdp]\ninterfaces = [\"lo\"]\nmode = \"generic\"\n")
	r = RunCmd(t, 20*time.Second, "", querydBin, "check", "-local=false", withXDP)
	if !strings.Contains(r.Stdout+r.Stderr, "listen.divert: queryd refuses to start unless the XDP fast path attaches") ||
		!strings.Contains(r.Stdout+r.Stderr, "CAP_BPF") {
		t.Errorf("queryd check does not say what divert needs: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	r = runUnprivileged(t, dir, querydBin, "-config", withXDP)
	if r.Err == nil || !strings.Contains(r.Stderr, "[listen] divert: the XDP fast path could not be attached") || !strings.Contains(r.Stderr, "relay mode") {
		t.Errorf("without privileges: %v\n%s", r.Err, r.Stderr)
	}
}

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o644) }

// runUnprivileged runs the daemon binary without CAP_BPF and CAP_NET_ADMIN:
// as it is for a non-root user, else as nobody (a copy of the binary in
// dir, which nobody may read and write).
func runUnprivileged(t *testing.T, dir, bin string, args ...string) CmdResult {
	t.Helper()
	if os.Geteuid() != 0 {
		return RunCmd(t, 20*time.Second, "", bin, args...)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	own := dir + "/queryd"
	if err := os.WriteFile(own, b, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, own, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_RUNTIME_DIR="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("queryd as nobody: %v\n%s", err, stderr.String())
	return CmdResult{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// TestDivertIPv6 (issue 27): divert over IPv6 (the program's IPv6 parse
// and reply, the egress rewrite's IPv6 header): the stand-in on the server
// namespace's IPv6 address, A2S_INFO and the split A2S_RULES from the
// client's IPv6 address answered by queryd on a connected socket, none
// reaching the stand-in, and a game datagram reaching it from the client's
// own address and port.
func TestDivertIPv6(t *testing.T) {
	clientCheck(t, "queryd_go_a2s", "divert")
	n := netnstest.New(t)
	game := netip.AddrPortFrom(netnstest.ServerAddr6, 27015)
	stand := startStandIn(t, n.ServerNS, game)
	d := StartDaemon(t, divertOptions(n, game, "a2s", map[string]map[string]any{"a2s": nil}))
	want := RichState()
	err := netnstest.Do(n.ClientNS, func() error {
		c, err := a2s.Dial(game.String())
		if err != nil {
			return err
		}
		defer c.Close()
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			info, err := c.Info()
			if err == nil && info.Name == want.Name {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("A2S_INFO over IPv6: %v %+v", err, info)
			}
		}
		rules, err := c.Rules()
		if err != nil || len(rules) < len(want.Rules) {
			return fmt.Errorf("A2S_RULES over IPv6: %v, %d rules", err, len(rules))
		}
		g, err := net.DialUDP("udp6", nil, net.UDPAddrFromAddrPort(game))
		if err != nil {
			return err
		}
		defer g.Close()
		me := g.LocalAddr().(*net.UDPAddr).AddrPort()
		g.Write([]byte("game packet"))
		buf := make([]byte, 2048)
		g.SetReadDeadline(time.Now().Add(3 * time.Second))
		m, err := g.Read(buf)
		if err != nil {
			return fmt.Errorf("game datagram over IPv6: no answer: %w", err)
		}
		if wantEcho := "ECHO " + me.String() + " game packet"; string(buf[:m]) != wantEcho {
			return fmt.Errorf("game datagram over IPv6: got %q, want %q", buf[:m], wantEcho)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := stand.from(&stand.queries, netnstest.ClientAddr6); got != 0 {
		t.Errorf("the stand-in received %d queries from the client over IPv6", got)
	}
	if r := d.Metric(t, "queryd_xdp_divert_rewritten_total"); r == 0 {
		t.Error("no reply of the socket path was rewritten over IPv6")
	}
}

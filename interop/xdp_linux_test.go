package interop

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/netnstest"
)

// The real clients against queryd with the XDP fast path attached. The
// test makes two network namespaces joined by a veth pair
// (internal/netnstest: addresses of 198.18.0.0/15 that exist only there)
// and runs the race-built daemon in the server's (ip netns exec) with
// [xdp] interfaces naming its end of the veth, in native mode. Each client
// check runs on the test goroutine moved, locked to its thread, into the
// client's namespace (netnstest.Enter): the Go clients' sockets are made
// there, and qstat and the Node scripts, started by that thread, inherit
// it (netnstest.CheckExec makes sure before each check). The checks are
// the suite's own, unchanged.

// xdpUDP is the daemon's address in the test network.
var xdpUDP = netip.AddrPortFrom(netnstest.ServerAddr4, 27015)

// TestXDPClients feeds the suite's states in turn to one daemon with A2S,
// GameSpy4, Quake 3, SQP and Bedrock on and the fast path attached, and
// asks each through every real client of its protocol from the client's
// namespace; each client must see the fed state. queryd_xdp_requests_total and
// queryd_xdp_resize_failed_total show the program's part in each check:
//
//   - the rich A2S state: the program challenges and answers A2S_INFO for
//     every client (it passes the split A2S_PLAYER and A2S_RULES replies to
//     the socket path);
//   - the suite's GameSpy4 and Quake 3 states: the program makes every
//     GameSpy4 handshake and answers the basic stats and Quake 3 getinfo,
//     but their full stat and statusResponse are more than a veth frame can
//     grow by (about 210 bytes: a veth runs the program on the sender's own
//     buffer, which has headroom and no tailroom, where a NIC driver gives
//     each frame a page): it passes those queries, counted as
//     resize_failed, and the socket path answers;
//   - smaller GameSpy4 and Quake 3 states whose replies fit: the program
//     answers every client's stat and getstatus itself;
//   - SQP: the program makes sqpprobe's challenge and answers its query
//     of the server info;
//   - Bedrock: the program answers both clients' pings with the pong.
func TestXDPClients(t *testing.T) {
	for _, r := range xdpRounds() {
		names := make([]string, len(r.checks))
		for i, c := range r.checks {
			names[i] = c.name
		}
		clientPlan(t, "xdp", names...)
	}
	n := netnstest.New(t)
	d := StartDaemon(t, Options{
		Netns:   n.ServerNS,
		UDPAddr: xdpUDP.String(),
		Protocols: map[string]map[string]any{
			"a2s":      nil,
			"gamespy4": {"hostport": gs4HostPort, "hostip": "127.0.0.1"},
			// The two Quake 3 rounds send 11 requests from one address:
			// more than the default burst of 10.
			"quake3":  {"gamename": "interop", "protocol": 84, "packet_burst": 30},
			"sqp":     {"game_type": sqpGameType},
			"bedrock": {"ipv4_port": mbeIPv4Port, "ipv6_port": mbeIPv6Port},
		},
		Tables: map[string]map[string]any{"xdp": {"interfaces": []string{n.ServerIf}, "mode": "native"}},
	})
	attached := fmt.Sprintf(`queryd_xdp_attached{interface=%q,mode="native"}`, n.ServerIf)
	if got := d.Metric(t, attached); got != 1 {
		t.Fatalf("%s = %v, want 1", attached, got)
	}
	probe := newXDPProbe(t, n)
	for _, r := range xdpRounds() {
		doc, mark := r.state.Doc(), r.state.Map
		if r.doc != nil {
			doc, mark = r.doc, r.mark
		}
		d.Replace(t, doc)
		r.wait(probe, t, mark)
		before := xdpCounts(t, d, r.proto)
		ran := false // a client ran: one not here (sqpprobe without ../shared) skips
		for _, c := range r.checks {
			t.Run(r.name+"/"+c.name, func(t *testing.T) {
				defer func() { ran = ran || !t.Skipped() }()
				clientCheck(t, c.name, "xdp")
				c.run(t, d, n, r.proto, r.strict)
			})
		}
		if got := xdpCounts(t, d, r.proto).sub(before); ran && got.answered == 0 {
			t.Errorf("%s: the program answered none of the clients' %s queries", r.name, r.proto)
		}
	}
}

// xdpRound is one state and the clients that ask it.
type xdpRound struct {
	name, proto string
	state       TestState
	wait        func(*xdpProbe, *testing.T, string)
	strict      bool // every client must be answered by the program, no resize failing
	checks      []xdpCheck
	doc         map[string]any // fed instead of state's, when set
	mark        string         // what wait looks for in a reply to doc
}

func xdpRounds() []xdpRound {
	addr := xdpUDP.String()
	host, port := netnstest.ServerAddr4.String(), int(xdpUDP.Port())
	a2s := RichState()
	gs4Checks := func(st TestState) []xdpCheck {
		return []xdpCheck{
			{"qstat_gs4", func(t *testing.T) { gs4Qstat(t, addr, st) }},
			{"gamedig_gamespy3", func(t *testing.T) { gs4Gamedig(t, addr, st) }},
			{"npm_minecraft-server-util_queryBasic", func(t *testing.T) { gs4McsuBasic(t, host, port, st) }},
			{"npm_minecraft-server-util_queryFull", func(t *testing.T) { gs4McsuFull(t, host, port, st) }},
			{"go_minequery_basic_strict", func(t *testing.T) { gs4MinequeryBasic(t, host, port, st) }},
			{"go_minequery_full_strict", func(t *testing.T) { gs4MinequeryFull(t, host, port, st) }},
			{"go_mcutils_basic", func(t *testing.T) { gs4McutilsBasic(t, host, port, st) }},
			{"go_mcutils_full", func(t *testing.T) { gs4McutilsFull(t, host, port, st) }},
		}
	}
	q3Checks := func(st TestState) []xdpCheck {
		return []xdpCheck{
			{"qstat_q3s", func(t *testing.T) { q3Qstat(t, "-q3s", addr, st) }},
			{"qstat_woets", func(t *testing.T) { q3Qstat(t, "-woets", addr, st) }},
			{"gamedig_quake3", func(t *testing.T) { q3Gamedig(t, "quake3", addr, st) }},
			{"gamedig_wet", func(t *testing.T) { q3Gamedig(t, "wet", addr, st) }},
		}
	}
	gs, gsSmall, q3, q3Small := gs4State(), gs4SmallState(), q3State(), q3SmallState()
	sqp := sqpSmallState()
	mbe := mbeState{name: "queryd XDP — Zoë's Bedrock", mapName: "Ελληνικά", version: "1.21.50", gamemode: "Créatif", players: 3, max: 20}
	return []xdpRound{
		{name: "a2s", proto: "a2s", state: a2s, wait: (*xdpProbe).waitA2S, strict: true, checks: []xdpCheck{
			{"qstat", func(t *testing.T) { checkQstat(t, addr, a2s) }},
			{"gamedig_valve", func(t *testing.T) { checkGamedigValve(t, addr, a2s) }},
			{"go_rumblefrog_go-a2s", func(t *testing.T) { checkRumblefrog(t, addr, a2s) }},
			{"go_woozymasta_a2s", func(t *testing.T) { checkWoozymasta(t, addr, a2s) }},
		}},
		{name: "gamespy4", proto: "gamespy4", state: gs, wait: (*xdpProbe).waitGS4, strict: false, checks: gs4Checks(gs)},
		{name: "gamespy4_small", proto: "gamespy4", state: gsSmall, wait: (*xdpProbe).waitGS4, strict: true, checks: gs4Checks(gsSmall)},
		{name: "quake3", proto: "quake3", state: q3, wait: (*xdpProbe).waitQ3, strict: false, checks: q3Checks(q3)},
		{name: "quake3_small", proto: "quake3", state: q3Small, wait: (*xdpProbe).waitQ3, strict: true, checks: q3Checks(q3Small)},
		{name: "sqp", proto: "sqp", state: sqp, wait: (*xdpProbe).waitSQP, strict: true, checks: []xdpCheck{
			{"sqpprobe", func(t *testing.T) {
				checkSQPProbe(t, runSQPProbe(t, needSQPProbe(t), addr, sqpInfo), sqpInfo, sqp, port)
			}},
		}},
		{name: "bedrock", proto: "bedrock", doc: mbe.doc(), mark: mbe.mapName, wait: (*xdpProbe).waitBedrock, strict: true, checks: []xdpCheck{
			{"npm_minecraft-server-util_statusBedrock", func(t *testing.T) { mbeMcsu(t, host, port, mbeWant{mbe, 766}) }},
			{"gamedig_mbe", func(t *testing.T) { mbeGamedig(t, addr, mbeWant{mbe, 766}) }},
		}},
	}
}

// sqpSmallState is the rich state with two players and two rules.
func sqpSmallState() TestState {
	s := RichState()
	s.Players = s.Players[:2]
	s.Rules = map[string]string{"mp_timelimit": "20", "sv_cheats": "0"}
	return s
}

// gs4SmallState is gs4State with two players and a short name: its full
// stat fits what a veth frame can grow by.
func gs4SmallState() TestState {
	s := gs4State()
	s.Name, s.Map, s.Players = "Zoë's MC", "world_small", []TestPlayer{s.Players[0], s.Players[2]}
	return s
}

// q3SmallState is q3State with a player and a bot and one rule: its
// statusResponse fits what a veth frame can grow by.
func q3SmallState() TestState {
	s := q3State()
	s.Name, s.Map = "^1small", "q3dm1"
	s.Rules = map[string]string{"timelimit": "20"}
	s.Players = []TestPlayer{s.Players[0], s.Players[len(s.Players)-1]}
	return s
}

// xdpCheck is one client check of the suite.
type xdpCheck struct {
	name  string
	check func(t *testing.T)
}

// run runs the check from the client's namespace and fails unless the
// program took part in it: it answered or challenged at least one of the
// client's queries of protocol proto, or (unless strict) passed one
// because the frame could not grow to its reply. strict: it answered at
// least one, and no reply failed to fit.
func (c xdpCheck) run(t *testing.T, d *Daemon, n *netnstest.Net, proto string, strict bool) {
	before := xdpCounts(t, d, proto)
	func() {
		leave := netnstest.Enter(t, n.ClientNS)
		defer leave()
		netnstest.CheckExec(t, n.ClientNS)
		c.check(t)
	}()
	got := xdpCounts(t, d, proto).sub(before)
	t.Logf("the program answered %v of the client's %s queries and challenged %v; it passed %v datagrams to the socket path, %v of them because the reply did not fit the frame",
		got.answered, proto, got.challenged, got.passed, got.resizeFailed)
	switch {
	case strict && (got.answered == 0 || got.resizeFailed != 0):
		t.Errorf("the program answered %v of the client's %s queries, and %v replies did not fit the frame: want at least 1 and none", got.answered, proto, got.resizeFailed)
	case !strict && got.answered+got.challenged+got.resizeFailed == 0:
		t.Errorf("the program took no part in the client's %s queries: the socket path served them all", proto)
	}
}

// xdpCount is the program's counters for one protocol (passed and
// resize_failed are for every protocol).
type xdpCount struct{ answered, challenged, passed, resizeFailed float64 }

func (a xdpCount) sub(b xdpCount) xdpCount {
	return xdpCount{a.answered - b.answered, a.challenged - b.challenged, a.passed - b.passed, a.resizeFailed - b.resizeFailed}
}

// xdpCounts reads the program's counters from /metrics.
func xdpCounts(t *testing.T, d *Daemon, proto string) xdpCount {
	t.Helper()
	req := func(outcome string) float64 {
		return d.Metric(t, fmt.Sprintf(`queryd_xdp_requests_total{outcome=%q,protocol=%q,server="main"}`, outcome, proto))
	}
	var passed float64 // every reason (xdp/doc.go lists them)
	for _, reason := range []string{"other", "not_local", "martian", "malformed", "vlan", "no_route"} {
		passed += d.Metric(t, fmt.Sprintf(`queryd_xdp_passed_total{reason=%q,server="main"}`, reason))
	}
	return xdpCount{req("answered"), req("challenged"), passed, d.Metric(t, `queryd_xdp_resize_failed_total{server="main"}`)}
}

// xdpProbe asks the daemon from the client's second address (so that the
// clients' own Quake 3 packet budget stays whole) until the program serves
// a newly fed state.
type xdpProbe struct{ c *net.UDPConn }

func newXDPProbe(t *testing.T, n *netnstest.Net) *xdpProbe {
	t.Helper()
	var c *net.UDPConn
	err := netnstest.Do(n.ClientNS, func() (err error) {
		c, err = net.DialUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netnstest.ClientAddr4b, 0)), net.UDPAddrFromAddrPort(xdpUDP))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &xdpProbe{c: c}
}

// ask sends req and returns the first reply within 200 ms, or nil.
func (p *xdpProbe) ask(req []byte) []byte {
	buf := make([]byte, 2048)
	for { // drop replies to earlier requests
		p.c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := p.c.Read(buf); err != nil {
			break
		}
	}
	p.c.Write(req)
	p.c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	k, err := p.c.Read(buf)
	if err != nil {
		return nil
	}
	return buf[:k]
}

// until asks with ask until a reply contains want, for up to 5 s; the
// program may publish a new state's replies up to one sync after the feed.
func (p *xdpProbe) until(t *testing.T, what string, want string, ask func() []byte) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !bytes.Contains(ask(), []byte(want)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: no reply naming %q within 5 s", what, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *xdpProbe) waitA2S(t *testing.T, want string) {
	info := []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")
	p.until(t, "A2S_INFO", want, func() []byte {
		ch := p.ask(info)
		if len(ch) != 9 {
			return nil
		}
		return p.ask(append(append([]byte{}, info...), ch[5:]...))
	})
}

func (p *xdpProbe) waitGS4(t *testing.T, want string) {
	p.until(t, "GameSpy4 basic stat", want, func() []byte {
		hs := p.ask([]byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4})
		if len(hs) < 7 {
			return nil
		}
		tok, err := strconv.ParseUint(string(bytes.TrimRight(hs[5:], "\x00")), 10, 32)
		if err != nil {
			return nil
		}
		return p.ask([]byte{0xFE, 0xFD, 0x00, 1, 2, 3, 4, byte(tok >> 24), byte(tok >> 16), byte(tok >> 8), byte(tok)})
	})
}

func (p *xdpProbe) waitQ3(t *testing.T, want string) {
	p.until(t, "Quake 3 getinfo", want, func() []byte { return p.ask([]byte("\xFF\xFF\xFF\xFFgetinfo")) })
}

func (p *xdpProbe) waitSQP(t *testing.T, want string) {
	p.until(t, "SQP server info", want, func() []byte {
		ch := p.ask([]byte{0, 0, 0, 0, 0})
		if len(ch) != 5 || ch[0] != 0 {
			return nil
		}
		return p.ask(append(append([]byte{1}, ch[1:5]...), 0, 1, sqpInfo))
	})
}

// bedrockPing is an unconnected ping: id 01, a time, the offline magic, a
// client GUID.
var bedrockPing = []byte("\x01\x00\x00\x00\x00\x00\x00\x00\x2a" +
	"\x00\xff\xff\x00\xfe\xfe\xfe\xfe\xfd\xfd\xfd\xfd\x12\x34\x56\x78" +
	"\x00\x00\x00\x00\x00\x00\x00\x07")

func (p *xdpProbe) waitBedrock(t *testing.T, want string) {
	p.until(t, "Bedrock pong", want, func() []byte { return p.ask(bedrockPing) })
}

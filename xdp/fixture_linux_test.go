//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/sagl"
	"github.com/queryd/queryd/sqp"
	"github.com/queryd/queryd/state"
)

const testPort = 27015

// testServer is the fixture's one server.
const testServer = "main"

// fixture is queryd's responder (the socket path) and the fast path, in
// the server namespace of a test network, answering A2S, GameSpy4, Quake 3,
// SQP, Bedrock and SAGL from one state.
type fixture struct {
	net     *testNet
	srv     *responder.Server
	fp      *FastPath
	issuer  *challenge.Issuer
	reg     *prometheus.Registry
	snap    *state.Snapshot // testState
	lastFed atomic.Int64    // the feed's last message, Unix ns; 0: never
	stop    func()          // ends Serve (the fast path closes) and the socket path; once
}

// testState has a few players, so that A2S_PLAYER, the rules, the stats,
// every SQP reply and the SAGL JSON fit one datagram.
const testState = `{"name": "XDP test server", "map": "arena", "game": "Test", "folder": "test",
	"version": "1.0", "max_players": 16,
	"players": {"0": {"name": "Thomas", "score": 12, "ping": 31}, "3": {"name": "Sam", "score": 4, "ping": 58, "time": 91.5}},
	"rules": {"mp_timelimit": "30", "sv_gravity": "800"}}`

const testStaleAfter = 2 * time.Second

// testBedrock is [bedrock]'s defaults with a fixed server GUID.
var testBedrock = bedrock.Config{
	Edition: bedrock.DefaultEdition, Protocol: bedrock.DefaultProtocol, GameMode: bedrock.DefaultGameMode,
	GameModeNumber: bedrock.DefaultGameModeNumber, IPv4Port: testPort, IPv6Port: testPort, GUID: 1234567890123456789,
}

// testProtocols are the fixture's protocol handlers (not updated yet).
func testProtocols(issuer *challenge.Issuer) []module.Protocol {
	return []module.Protocol{
		a2s.NewHandler(a2s.Config{AppID: a2s.DefaultAppID, Protocol: a2s.DefaultProtocol, InfoChallenge: true}, issuer, nil),
		gamespy4.NewHandler(gamespy4.Config{GameType: gamespy4.DefaultGameType, GameID: gamespy4.DefaultGameID}, issuer),
		quake3.NewHandler(quake3.Config{}, quake3.DefaultPacketRate, 0),
		sqp.NewHandler(sqp.Config{GameType: "test"}, issuer),
		bedrock.NewHandler(testBedrock, bedrock.DefaultPacketRate, 0),    // the default packet rate: 2/s after 10
		sagl.NewHandler(sagl.Config{Players: sagl.PlayersCount}, issuer), // the count only: a veth grows a frame by ~210 B at most
	}
}

// testSnapshot is testState's snapshot.
func testSnapshot(t *testing.T) *state.Snapshot {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(testState), &doc); err != nil {
		t.Fatal(err)
	}
	doc, err := state.Normalize(doc)
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.NewStore(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return store.Snapshot()
}

// newFixture starts the socket path and attaches the fast path (native
// mode) to the server's end of a fresh test network.
func newFixture(t *testing.T, lim responder.Limits) *fixture {
	t.Helper()
	return newFixtureWith(t, lim, fixtureOpts{})
}

// fixtureOpts are the fixture's options beyond the budgets.
type fixtureOpts struct {
	deny    *responder.Deny   // [limits] deny, for both paths
	setup   func(n *testNet)  // runs on the network before queryd starts
	unbound bool              // the unbound program (no VLAN kfunc)
	object  []byte            // the program's object (nil: the embedded one)
	extra   []module.Protocol // protocols beyond testProtocols, on both paths
	clsact  bool              // divert's egress program as a tc filter, as before Linux 6.6
}

// newFixtureWith is newFixture with options.
func newFixtureWith(t *testing.T, lim responder.Limits, o fixtureOpts) *fixture {
	t.Helper()
	needXDP(t)
	fx := &fixture{net: newTestNet(t), reg: prometheus.NewRegistry()}
	if o.setup != nil {
		o.setup(fx.net)
	}
	var err error
	if fx.issuer, err = challenge.New(nil); err != nil {
		t.Fatal(err)
	}
	protos := append(testProtocols(fx.issuer), o.extra...)
	fx.snap = testSnapshot(t)
	hs := make([]responder.Handler, len(protos))
	for i, p := range protos {
		p.Update(fx.snap)
		hs[i] = p
	}
	fx.srv, err = responder.New(responder.Config{
		Listen:   []netip.AddrPort{netip.AddrPortFrom(netip.IPv4Unspecified(), testPort), netip.AddrPortFrom(netip.IPv6Unspecified(), testPort)},
		Socket:   responder.SocketBatch,
		Workers:  1,
		Limits:   lim,
		Deny:     o.deny,
		Silent:   fx.stale,
		Registry: fx.reg,
	}, hs...)
	if err != nil {
		t.Fatal(err)
	}
	err = inNS(fx.net.srvNS, func() error {
		if err := fx.srv.Listen(); err != nil {
			return err
		}
		fx.fp, err = New(Config{
			Interfaces: []string{fx.net.srvIf},
			Mode:       ModeNative,
			Issuer:     fx.issuer,
			unbound:    o.unbound,
			object:     o.object,
			clsact:     o.clsact,
			Registry:   fx.reg,
			Servers: []Server{{
				Name:       testServer,
				Listen:     fx.srv.Addrs(),
				Limits:     lim,
				Deny:       o.deny,
				SilentFrom: fx.silentFrom,
				Registry:   fx.reg,
			}},
		})
		return err
	})
	if err != nil {
		fx.srv.Close()
		t.Fatal(err)
	}
	if fx.fp.links[0].mode != ModeNative {
		t.Fatalf("attached in %s mode, want native on a veth", fx.fp.links[0].mode)
	}
	fx.srv.AddCounts(fx.fp.CountsOf(testServer))
	fx.fp.SetProtocols(testServer, protos)
	fx.srv.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fx.fp.Serve(ctx) }()
	fx.stop = sync.OnceFunc(func() {
		if st, ok := fx.stats(); ok {
			t.Logf("the program passed, by reason (other, not_local, martian, malformed, vlan, no_route): %v", st.Passed)
		}
		cancel()
		<-done
		fx.srv.Close()
	})
	t.Cleanup(fx.stop)
	fx.waitPublished(t)
	return fx
}

// divert is fx.fp.Divert in the server's namespace, where the egress
// program's interface is (tcx and tc name it by index in the caller's).
func (fx *fixture) divert(server string, addrs []DivertAddr, takes []string) (dv *Divert, err error) {
	err = inNS(fx.net.srvNS, func() (err error) {
		dv, err = fx.fp.Divert(server, addrs, takes)
		return err
	})
	return dv, err
}

// main is the fixture's server in the fast path.
func (fx *fixture) main() *server { return fx.fp.lookup(testServer) }

// stats are the program's counters of the fixture's server.
func (fx *fixture) stats() (querydStats, bool) {
	s := fx.main()
	if s == nil {
		return querydStats{}, false
	}
	return fx.fp.stats(s.index)
}

// fed is the feed's last message time (LastFed).
func (fx *fixture) fed() time.Time {
	if n := fx.lastFed.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// silentFrom is the program's SilentFrom: the feed's last message plus
// testStaleAfter (zero before the first).
func (fx *fixture) silentFrom() time.Time {
	if last := fx.fed(); !last.IsZero() {
		return last.Add(testStaleAfter)
	}
	return time.Time{}
}

// stale is the socket path's Silent, as feed.Server.Stale decides.
func (fx *fixture) stale(now time.Time) bool {
	last := fx.lastFed.Load()
	return last != 0 && now.UnixNano()-last > int64(testStaleAfter)
}

// waitPublished waits until Serve has published the replies.
func (fx *fixture) waitPublished(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		fx.fp.mu.Lock()
		n := fx.fp.updates
		fx.fp.mu.Unlock()
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the fast path published no replies within 5 s")
}

// setEnabled turns the program's answering on or off (off: every datagram
// goes to the socket path) and waits for the config map to say so.
func (fx *fixture) setEnabled(t *testing.T, on bool) {
	t.Helper()
	fx.fp.disabled.Store(!on)
	if err := fx.fp.syncConfig(fx.main()); err != nil {
		t.Fatal(err)
	}
}

// shiftClock moves the program's wall clock (the token epoch) by d.
func (fx *fixture) shiftClock(t *testing.T, d time.Duration) {
	t.Helper()
	fx.fp.clockShift.Store(int64(d))
	if err := fx.fp.syncConfig(fx.main()); err != nil {
		t.Fatal(err)
	}
}

// answered returns the program's counts of one protocol and outcome.
func (fx *fixture) count(t *testing.T, proto, outcome int) uint64 {
	t.Helper()
	st, ok := fx.stats()
	if !ok {
		t.Fatal("no stats")
	}
	return st.Req[proto][outcome]
}

// client is a UDP socket in the client namespace, bound to one of its
// addresses and connected to the server.
type client struct {
	c *net.UDPConn
}

func (fx *fixture) dial(t *testing.T, src, dst netip.Addr) *client {
	t.Helper()
	var c *net.UDPConn
	err := inNS(fx.net.cliNS, func() (err error) {
		c, err = net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)), net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst, testPort)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{c: c}
}

// ask sends req and returns the first reply within wait, or nil.
func (c *client) ask(t *testing.T, req []byte, wait time.Duration) []byte {
	t.Helper()
	c.drain()
	if _, err := c.c.Write(req); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	c.c.SetReadDeadline(time.Now().Add(wait))
	n, err := c.c.Read(buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

// drain discards replies left from earlier requests.
func (c *client) drain() {
	buf := make([]byte, 65536)
	for {
		c.c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.c.Read(buf); err != nil {
			return
		}
	}
}

//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
)

// hostServer is one server of TestXDPServers: its socket path and its
// silence, as the daemon runs each server of a host.
type hostServer struct {
	name     string
	port     uint16
	srv      *responder.Server
	protos   []module.Protocol
	limits   responder.Limits
	silentAt atomic.Int64 // Unix ns from which it is silent; 0: never
}

func (h *hostServer) silentFrom() time.Time {
	if n := h.silentAt.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

func (h *hostServer) silent(now time.Time) bool {
	n := h.silentAt.Load()
	return n != 0 && now.UnixNano() >= n
}

// xdpServer is h as the fast path takes it.
func (h *hostServer) xdpServer(reg *prometheus.Registry) Server {
	return Server{Name: h.name, Listen: h.srv.Addrs(), Limits: h.limits, SilentFrom: h.silentFrom,
		Registry: prometheus.WrapRegistererWith(prometheus.Labels{"server": h.name}, reg)}
}

// newHostServer starts a socket path on port answering A2S and Quake 3
// from a state named for the server.
func newHostServer(t *testing.T, n *testNet, issuer *challenge.Issuer, name string, port uint16, lim responder.Limits) *hostServer {
	t.Helper()
	return newHostServerAt(t, n, issuer, name, netip.AddrPortFrom(netip.IPv4Unspecified(), port), lim)
}

// newHostServerAt is newHostServer listening on one address:port.
func newHostServerAt(t *testing.T, n *testNet, issuer *challenge.Issuer, name string, at netip.AddrPort, lim responder.Limits) *hostServer {
	t.Helper()
	port := at.Port()
	h := &hostServer{name: name, port: port, limits: lim}
	var doc map[string]any
	if err := json.Unmarshal([]byte(fmt.Sprintf(`{"name": "host server %s", "map": "arena", "max_players": 8}`, name)), &doc); err != nil {
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
	h.protos = []module.Protocol{
		a2s.NewHandler(a2s.Config{AppID: a2s.DefaultAppID, Protocol: a2s.DefaultProtocol, InfoChallenge: true}, issuer, nil),
		quake3.NewHandler(quake3.Config{}, quake3.DefaultPacketRate, 0),
	}
	hs := make([]responder.Handler, len(h.protos))
	for i, p := range h.protos {
		p.Update(store.Snapshot())
		hs[i] = p
	}
	h.srv, err = responder.New(responder.Config{
		Listen:   []netip.AddrPort{at},
		Socket:   responder.SocketBatch,
		Workers:  1,
		Limits:   lim,
		Silent:   h.silent,
		Registry: prometheus.NewRegistry(),
	}, hs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := inNS(n.srvNS, h.srv.Listen); err != nil {
		t.Fatal(err)
	}
	h.srv.Start()
	t.Cleanup(func() { h.srv.Close() })
	return h
}

// hostClient is a UDP socket in the client namespace, not connected: it
// asks any server's port.
type hostClient struct{ c *net.UDPConn }

func dialHost(t *testing.T, n *testNet) *hostClient {
	t.Helper()
	var c *net.UDPConn
	err := inNS(n.cliNS, func() (err error) {
		c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(cliAddr4, 0)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &hostClient{c: c}
}

// ask sends req to port and returns the first reply within wait, or nil.
func (c *hostClient) ask(t *testing.T, port uint16, req []byte, wait time.Duration) []byte {
	t.Helper()
	return c.askAt(t, netip.AddrPortFrom(srvAddr4, port), req, wait)
}

// askAt sends req to to and returns the first reply within wait, or nil.
func (c *hostClient) askAt(t *testing.T, to netip.AddrPort, req []byte, wait time.Duration) []byte {
	t.Helper()
	buf := make([]byte, 65536)
	for { // replies left from earlier requests
		c.c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, _, err := c.c.ReadFromUDPAddrPort(buf); err != nil {
			break
		}
	}
	if _, err := c.c.WriteToUDPAddrPort(req, to); err != nil {
		t.Fatal(err)
	}
	c.c.SetReadDeadline(time.Now().Add(wait))
	n, from, err := c.c.ReadFromUDPAddrPort(buf)
	if err != nil {
		return nil
	}
	if from != to {
		t.Fatalf("asked %v, the reply came from %v", to, from)
	}
	return buf[:n]
}

// token asks port for an A2S challenge and returns its token.
func (c *hostClient) token(t *testing.T, port uint16) []byte {
	t.Helper()
	r := c.ask(t, port, a2sInfo, time.Second)
	if len(r) != 9 || r[4] != 'A' {
		t.Fatalf("port %d: not a challenge: % x", port, r)
	}
	return r[5:9]
}

// countsByServer is every server's program counters, by name.
func countsByServer(t *testing.T, f *FastPath) map[string]querydStats {
	t.Helper()
	out := map[string]querydStats{}
	f.mu.Lock()
	ss := f.byIndex
	f.mu.Unlock()
	for _, s := range ss {
		if s == nil {
			continue
		}
		st, ok := f.stats(s.index)
		if !ok {
			t.Fatal("no stats")
		}
		out[s.cfg.Name] = st
	}
	return out
}

// TestXDPServers: one program answers three servers on three ports of one
// address, each from its own state, config and budgets: a token-bearing
// A2S_INFO to each port comes back with that server's name and is counted
// at that server only (in its own labelled series); one server's small
// budget limits that server only; silencing one server silences only its
// queries; removing one (SetServers) passes its frames to its socket path,
// and adding it back answers them in the program again.
func TestXDPServers(t *testing.T) {
	needXDP(t)
	n := newTestNet(t)
	issuer, err := challenge.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	small := responder.Limits{PerIPRate: 100, PerIPBurst: 1500, UnprovenRate: 1 << 20, UnprovenBurst: 1 << 20, TrackedIPs: 1024}
	hs := []*hostServer{
		newHostServer(t, n, issuer, "alpha", 27101, responder.Limits{}),
		newHostServer(t, n, issuer, "bravo", 27102, small),
		newHostServer(t, n, issuer, "charlie", 27103, responder.Limits{}),
	}
	reg := prometheus.NewRegistry()
	servers := func(names ...string) (out []Server) {
		for _, h := range hs {
			for _, name := range names {
				if h.name == name {
					out = append(out, h.xdpServer(reg))
				}
			}
		}
		return out
	}
	var f *FastPath
	err = inNS(n.srvNS, func() (err error) {
		f, err = New(Config{Interfaces: []string{n.srvIf}, Mode: ModeNative, Issuer: issuer, Registry: reg,
			Servers: servers("alpha", "bravo", "charlie")})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		f.SetProtocols(h.name, h.protos)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitServers(t, f, "alpha", "bravo", "charlie")
	c := dialHost(t, n)

	// Each port: its own name, counted at its own server.
	for _, h := range hs {
		tok := c.token(t, h.port)
		before := countsByServer(t, f)
		r := c.ask(t, h.port, a2sWithToken('T', tok), time.Second)
		if !bytes.Contains(r, []byte("host server "+h.name+"\x00")) {
			t.Fatalf("%s (port %d): A2S_INFO reply without its name: %q", h.name, h.port, r)
		}
		after := countsByServer(t, f)
		for name := range after {
			want := before[name].Req[pA2S][oAnswered]
			if name == h.name {
				want++
			}
			if got := after[name].Req[pA2S][oAnswered]; got != want {
				t.Fatalf("A2S_INFO to %s: %s's program count went %d → %d, want %d", h.name, name, before[name].Req[pA2S][oAnswered], got, want)
			}
		}
	}
	if got := metricSum(t, reg, "queryd_xdp_requests_total", map[string]string{"server": "charlie", "protocol": "a2s", "outcome": "answered"}); got != 1 {
		t.Fatalf(`queryd_xdp_requests_total{server="charlie",protocol="a2s",outcome="answered"} = %v, want 1`, got)
	}

	// One challenge issuer for the host: a token is bound to the client's
	// address, so alpha's is good at bravo.
	tok := c.token(t, 27101)
	if r := c.ask(t, 27102, a2sWithToken('T', tok), time.Second); !bytes.Contains(r, []byte("host server bravo")) {
		t.Fatalf("alpha's token at bravo: %q", r)
	}

	// bravo's budget (1,500 bytes, 100 B/s) runs out; alpha's, for the
	// same source, does not.
	for range 40 {
		c.ask(t, 27102, a2sWithToken('T', tok), 50*time.Millisecond)
	}
	st := countsByServer(t, f)
	if st["bravo"].Req[pA2S][oLimited] == 0 {
		t.Fatal("bravo's small budget limited nothing")
	}
	if st["alpha"].Req[pA2S][oLimited] != 0 || st["charlie"].Req[pA2S][oLimited] != 0 {
		t.Fatalf("bravo's budget limited another server: alpha %d, charlie %d", st["alpha"].Req[pA2S][oLimited], st["charlie"].Req[pA2S][oLimited])
	}
	if r := c.ask(t, 27101, a2sWithToken('T', tok), time.Second); !bytes.Contains(r, []byte("host server alpha")) {
		t.Fatalf("alpha after bravo's budget ran out: %q", r)
	}

	// charlie falls silent; alpha does not.
	hs[2].silentAt.Store(time.Now().UnixNano())
	time.Sleep(4 * syncEvery)
	staleBefore := countsByServer(t, f)["charlie"].Req[pA2S][oStale]
	if r := c.ask(t, 27103, a2sWithToken('T', tok), 500*time.Millisecond); r != nil {
		t.Fatalf("silent charlie answered: %q", r)
	}
	if got := countsByServer(t, f)["charlie"].Req[pA2S][oStale]; got != staleBefore+1 {
		t.Fatalf("silent charlie: the program counted %d stale drops, want 1", got-staleBefore)
	}
	if r := c.ask(t, 27101, a2sWithToken('T', tok), time.Second); !bytes.Contains(r, []byte("host server alpha")) {
		t.Fatalf("alpha while charlie is silent: %q", r)
	}
	hs[2].silentAt.Store(0)

	// bravo removed: its frames go to its socket path.
	if err := f.SetServers(servers("alpha", "charlie")); err != nil {
		t.Fatal(err)
	}
	before := countsByServer(t, f)
	tok = c.token(t, 27102)
	if r := c.ask(t, 27102, a2sWithToken('T', tok), time.Second); !bytes.Contains(r, []byte("host server bravo")) {
		t.Fatalf("removed bravo: the socket path did not answer: %q", r)
	}
	after := countsByServer(t, f)
	if _, ok := after["bravo"]; ok || len(after) != 2 {
		t.Fatalf("servers after removing bravo: %v", len(after))
	}
	for name := range after {
		if after[name].Req != before[name].Req {
			t.Fatalf("removed bravo's queries were counted at %s", name)
		}
	}
	if got := metricSum(t, reg, "queryd_xdp_requests_total", map[string]string{"server": "bravo"}); got != 0 {
		t.Fatalf("removed bravo's series are still exported (sum %v)", got)
	}

	// bravo back: the program answers it again, from a fresh budget.
	if err := f.SetServers(servers("alpha", "bravo", "charlie")); err != nil {
		t.Fatal(err)
	}
	f.SetProtocols("bravo", hs[1].protos)
	waitServers(t, f, "bravo")
	if r := c.ask(t, 27102, a2sWithToken('T', tok), time.Second); !bytes.Contains(r, []byte("host server bravo")) {
		t.Fatalf("bravo added back: %q", r)
	}
	if got := countsByServer(t, f)["bravo"].Req[pA2S][oAnswered]; got != 1 {
		t.Fatalf("bravo added back: the program counted %d answers, want 1", got)
	}
}

// waitServers waits until the named servers' replies are published.
func waitServers(t *testing.T, f *FastPath, names ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, name := range names {
		for {
			f.mu.Lock()
			s := f.servers[name]
			ok := s != nil && s.updates > 0
			f.mu.Unlock()
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("server %s: no replies published within 5 s", name)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// metricSum sums the samples of the named series whose labels include
// want.
func metricSum(t *testing.T, g prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue next
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// TestXDPMaxServers: the program's tables hold config.MaxServers servers
// (the C constant MAX_SERVERS, through bpf2go -type), and the fast path
// refuses more, and two servers of one name.
func TestXDPMaxServers(t *testing.T) {
	if maxServers != config.MaxServers {
		t.Fatalf("the program's MAX_SERVERS is %d, config.MaxServers %d", maxServers, config.MaxServers)
	}
	spec, err := loadQueryd()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{querydMapConfigMap, querydMapReplies, querydMapStatsMap, querydMapUnproven} {
		if got := spec.Maps[m].MaxEntries; got != uint32(maxServers) {
			t.Errorf("map %s holds %d servers, want %d", m, got, maxServers)
		}
	}
	many := make([]Server, maxServers+1)
	for i := range many {
		many[i].Name = fmt.Sprint("s", i)
	}
	if err := checkServers(many); err == nil {
		t.Errorf("%d servers accepted", len(many))
	}
	if err := checkServers(many[:maxServers]); err != nil {
		t.Errorf("%d servers refused: %v", maxServers, err)
	}
	if err := checkServers([]Server{{Name: "a"}, {Name: "a"}}); err == nil {
		t.Error("two servers named a accepted")
	}
}

// TestXDPDestsOf: the destinations table expands wildcards over the
// interfaces' local addresses of their family only, takes an exact listen
// only where the interface has its address, and lets it win over another
// server's wildcard on the same port; broadcasts are never destinations.
func TestXDPDestsOf(t *testing.T) {
	a4 := netip.MustParseAddr("198.18.0.1")
	b4 := netip.MustParseAddr("198.18.0.5")
	a6 := netip.MustParseAddr("fd00::1")
	key := func(ifx uint32, a netip.Addr) querydAddrkey { return querydAddrkey{Ifindex: ifx, Addr: a.As16()} }
	st := netState{
		ifaces: map[uint32]ifaceInfo{2: {mac: [6]byte{2, 0, 0, 0, 0, 2}}, 3: {mac: [6]byte{2, 0, 0, 0, 0, 3}, vlanUppers: true}},
		addrs: map[querydAddrkey]querydAddrKind{
			key(2, a4): querydAddrKindADDR_LOCAL, key(2, b4): querydAddrKindADDR_LOCAL, key(2, a6): querydAddrKindADDR_LOCAL,
			key(2, netip.MustParseAddr("198.18.0.255")): querydAddrKindADDR_BROADCAST,
			key(3, netip.MustParseAddr("198.18.1.1")):   querydAddrKindADDR_LOCAL,
		},
	}
	ap := netip.AddrPortFrom
	wild := &server{index: 0, cfg: Server{Listen: []netip.AddrPort{ap(netip.IPv4Unspecified(), 27015)}}}
	exact := &server{index: 1, cfg: Server{Listen: []netip.AddrPort{ap(b4, 27015), ap(netip.MustParseAddr("198.18.9.9"), 27016)}}}
	six := &server{index: 2, cfg: Server{Listen: []netip.AddrPort{ap(netip.IPv6Unspecified(), 27017)}}}
	dests, ports := destsOf([]*server{exact, wild, six}, st)
	dk := func(ifx uint32, a netip.Addr, port uint16) querydDestkey {
		return querydDestkey{Ifindex: ifx, Port: port<<8 | port>>8, Addr: a.Unmap().As16()}
	}
	want := map[querydDestkey]uint32{
		dk(2, a4, 27015): 0, dk(2, b4, 27015): 1, dk(3, netip.MustParseAddr("198.18.1.1"), 27015): 0,
		dk(2, a6, 27017): 2,
	}
	if len(dests) != len(want) {
		t.Errorf("%d destinations, want %d: %v", len(dests), len(want), dests)
	}
	for k, srv := range want {
		d, ok := dests[k]
		if !ok {
			t.Errorf("no destination %v", k)
			continue
		}
		if uint32(d.Server) != srv {
			t.Errorf("%v: server %d, want %d", k, d.Server, srv)
		}
		if d.Mac != st.ifaces[k.Ifindex].mac || (d.Iflags != 0) != st.ifaces[k.Ifindex].vlanUppers {
			t.Errorf("%v: interface MAC or flags wrong: %+v", k, d)
		}
	}
	if ports[27015] == 0 || ports[27016] != 2 || ports[27017] != 3 || len(ports) != 3 {
		t.Errorf("ports: %v", ports)
	}
}

// TestXDPServersByAddress: three servers on one port of three addresses
// of the veth (exact listens: the program's destinations are the
// addresses themselves); each address is answered by the program with its
// own server's state and counted there, and a fourth address of the veth
// that no server listens on gets nothing from the program (not_local).
func TestXDPServersByAddress(t *testing.T) {
	needXDP(t)
	n := newTestNet(t)
	addrs := []netip.Addr{srvAddr4, netip.MustParseAddr("198.18.0.11"), netip.MustParseAddr("198.18.0.12"), netip.MustParseAddr("198.18.0.13")}
	for _, a := range addrs[1:] {
		if err := run("ip", "-n", n.srvNS, "addr", "add", a.String()+"/32", "dev", n.srvIf); err != nil {
			t.Fatal(err)
		}
	}
	issuer, err := challenge.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	const port = 27200
	names := []string{"delta", "echo", "foxtrot"}
	reg := prometheus.NewRegistry()
	var hs []*hostServer
	var ss []Server
	for i, name := range names {
		h := newHostServerAt(t, n, issuer, name, netip.AddrPortFrom(addrs[i], port), responder.Limits{})
		hs = append(hs, h)
		ss = append(ss, h.xdpServer(reg))
	}
	var f *FastPath
	err = inNS(n.srvNS, func() (err error) {
		f, err = New(Config{Interfaces: []string{n.srvIf}, Mode: ModeNative, Issuer: issuer, Servers: ss})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		f.SetProtocols(h.name, h.protos)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitServers(t, f, names...)
	c := dialHost(t, n)
	for i, h := range hs {
		to := netip.AddrPortFrom(addrs[i], port)
		r := c.askAt(t, to, a2sInfo, time.Second)
		if len(r) != 9 || r[4] != 'A' {
			t.Fatalf("%v: not a challenge: % x", to, r)
		}
		before := countsByServer(t, f)
		r = c.askAt(t, to, a2sWithToken('T', r[5:9]), time.Second)
		if !bytes.Contains(r, []byte("host server "+h.name+"\x00")) {
			t.Fatalf("%v: A2S_INFO reply without %s's name: %q", to, h.name, r)
		}
		after := countsByServer(t, f)
		for name := range after {
			want := before[name].Req[pA2S][oAnswered]
			if name == h.name {
				want++
			}
			if got := after[name].Req[pA2S][oAnswered]; got != want {
				t.Fatalf("A2S_INFO to %v: %s's program count went %d → %d, want %d", to, name, before[name].Req[pA2S][oAnswered], got, want)
			}
		}
	}
	before := countsByServer(t, f)
	if r := c.askAt(t, netip.AddrPortFrom(addrs[3], port), a2sInfo, 300*time.Millisecond); r != nil {
		t.Fatalf("%v (no server there) answered: % x", addrs[3], r)
	}
	after := countsByServer(t, f)
	var notLocal uint64
	for name := range after {
		if after[name].Req != before[name].Req {
			t.Fatalf("the query to %v was answered or dropped at %s", addrs[3], name)
		}
		notLocal += after[name].Passed[querydPassReasonPASS_NOT_LOCAL] - before[name].Passed[querydPassReasonPASS_NOT_LOCAL]
	}
	if notLocal != 1 {
		t.Fatalf("the query to %v: passed as not_local %d times, want 1", addrs[3], notLocal)
	}
}

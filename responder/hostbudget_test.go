package responder

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/dgram"
)

// hostBudgetServers makes n servers answering a 120-byte A2S_INFO reply to
// a token-bearing request, each with a per-IP burst of perIPBurst bytes,
// sharing host (nil: none); it returns them with a request from src.
func hostBudgetServers(t testing.TB, n, perIPBurst int, host *HostBudget, src netip.AddrPort) ([]*Server, []byte) {
	t.Helper()
	clock := &dgram.Clock{}
	is := challenge.NewWithKey([16]byte{1}, clock.Now)
	var out []*Server
	for i := 0; i < n; i++ {
		s, err := New(Config{Listen: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, Registry: prometheus.NewRegistry(), Clock: clock,
			Limits: Limits{PerIPRate: 1, PerIPBurst: perIPBurst, UnprovenRate: 1, UnprovenBurst: 1500, TrackedIPs: 64},
			Host:   host}, &infoHandler{is: is, reply: make([]byte, 120)})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	req := append([]byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(req[25:], is.Token(src.Addr()))
	return out, req
}

// askAll asks every server rounds times from src at one instant (no
// refill: only the bursts count) and returns the replies each answered
// and the datagrams counted host_rate_limited.
func askAll(servers []*Server, req []byte, src netip.AddrPort, rounds int) (answered []int, hostLimited uint64) {
	now := time.Now()
	scratch := make([]byte, ScratchSize)
	answered = make([]int, len(servers))
	for i, s := range servers {
		ss := s.newSession()
		for r := 0; r < rounds; r++ {
			s.beginBatch(ss, now)
			if len(s.process(ss, req, scratch, src, nil, nil)) == 1 {
				answered[i]++
			}
		}
		ss.flush()
		hostLimited += ss.stats.req[1][outHostLimited].Load()
	}
	return answered, hostLimited
}

// TestHostBudgetAcrossServers: servers sharing one HostBudget send one
// source no more than the host-wide burst together, while each alone
// would send its own per-IP burst; the replies the host refuses are
// counted host_rate_limited. Without the host budget, each server
// answers its whole burst (the spoofed victim's n × per_ip of issue 39).
func TestHostBudgetAcrossServers(t *testing.T) {
	src := netip.MustParseAddrPort("192.0.2.7:40000")
	const perIPBurst, hostBurst = 12000, 30000 // 100 and 250 replies of 120 B
	host, err := NewHostBudget(HostLimits{PerIPRate: 1, PerIPBurst: hostBurst, TrackedIPs: 64})
	if err != nil {
		t.Fatal(err)
	}
	servers, req := hostBudgetServers(t, 4, perIPBurst, host, src)
	answered, limited := askAll(servers, req, src, 150)
	total := 0
	for _, n := range answered {
		total += n
	}
	if total != hostBurst/120 {
		t.Errorf("4 servers sharing a host burst of %d B answered %d replies of 120 B (%v), want %d", hostBurst, total, answered, hostBurst/120)
	}
	// Each server's own budget passes 100 requests (answered, or refused by
	// the host: its own budget is drawn first) and refuses the last 50.
	if want := uint64(4*150 - total - 4*50); limited != want {
		t.Errorf("%d requests counted host_rate_limited, want %d (answered %v)", limited, want, answered)
	}
	// Another source has its own host-wide bucket.
	other := netip.MustParseAddrPort("192.0.2.8:40000")
	servers2, req2 := hostBudgetServers(t, 1, perIPBurst, host, other)
	if got, _ := askAll(servers2, req2, other, 1); got[0] != 1 {
		t.Errorf("another source refused: the host budget is per source")
	}

	alone, req := hostBudgetServers(t, 4, perIPBurst, nil, src)
	answered, limited = askAll(alone, req, src, 150)
	for i, n := range answered {
		if n != perIPBurst/120 {
			t.Errorf("without a host budget, server %d answered %d, want its own burst's %d", i, n, perIPBurst/120)
		}
	}
	if limited != 0 {
		t.Errorf("without a host budget, %d counted host_rate_limited", limited)
	}
}

// TestHostBudgetSetLimits: the same limits keep the sources' state (a
// reload that changes nothing refills no one); other limits start afresh;
// a budget that cannot work is refused and the one in force kept.
func TestHostBudgetSetLimits(t *testing.T) {
	l := HostLimits{PerIPRate: 1, PerIPBurst: 1500, TrackedIPs: 64}
	h, err := NewHostBudget(l)
	if err != nil {
		t.Fatal(err)
	}
	k, now := keyOf(netip.MustParseAddr("192.0.2.1")), time.Now()
	if !h.load().allow(k, 1500, now) || h.load().allow(k, 1, now) {
		t.Fatal("a 1,500-byte burst did not allow exactly 1,500 bytes")
	}
	if err := h.SetLimits(l); err != nil {
		t.Fatal(err)
	}
	if h.load().allow(k, 1, now) {
		t.Error("SetLimits with the limits in force refilled the source")
	}
	if err := h.SetLimits(HostLimits{PerIPRate: 1, PerIPBurst: 3000, TrackedIPs: 64}); err != nil {
		t.Fatal(err)
	}
	if !h.load().allow(k, 3000, now) {
		t.Error("new limits did not start afresh")
	}
	if err := h.SetLimits(HostLimits{PerIPRate: 1, PerIPBurst: 100, TrackedIPs: 64}); err == nil {
		t.Error("a burst under one datagram accepted")
	}
	if got := h.Limits().PerIPBurst; got != 3000 {
		t.Errorf("after a refused SetLimits the burst is %d, want 3000 kept", got)
	}
	var none *HostBudget
	if !none.load().allow(k, 1<<20, now) || none.Limits() != (HostLimits{}) {
		t.Error("a nil HostBudget must allow everything")
	}
}

// TestHostLimitsDefaultAndShare: the default is HostFactor times a
// server's per-IP budget; a share is SplitBudget's.
func TestHostLimitsDefaultAndShare(t *testing.T) {
	d := DefaultHostLimits(Limits{})
	if d.PerIPRate != 4*DefaultLimits.PerIPRate || d.PerIPBurst != 4*DefaultLimits.PerIPBurst || d.TrackedIPs != DefaultLimits.TrackedIPs {
		t.Errorf("DefaultHostLimits(zero) = %+v, want 4 × %+v", d, DefaultLimits)
	}
	if err := d.Validate(); err != nil {
		t.Error(err)
	}
	half := d.Share(2)
	if half.PerIPRate != d.PerIPRate/2 || half.PerIPBurst != d.PerIPBurst/2 || half.TrackedIPs != d.TrackedIPs {
		t.Errorf("Share(2) of %+v = %+v", d, half)
	}
	if g := (HostLimits{PerIPRate: 1000, PerIPBurst: 2000}).GCRA(); g.Tolerance() != 2e9 {
		t.Errorf("GCRA tolerance %d ns, want 2 s (2,000 B at 1,000 B/s)", g.Tolerance())
	}
}

// TestProcessHostBudgetAllocs: the host-wide budget costs the hot path no
// allocation (a source already seen and a new one alike).
func TestProcessHostBudgetAllocs(t *testing.T) {
	host, err := NewHostBudget(HostLimits{PerIPRate: 1 << 40, PerIPBurst: 1 << 30, TrackedIPs: 1024})
	if err != nil {
		t.Fatal(err)
	}
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	servers, req := hostBudgetServers(t, 1, 1<<30, host, src)
	s := servers[0]
	s.SetLimits(Limits{PerIPRate: 1 << 40, PerIPBurst: 1 << 30, UnprovenRate: 1, UnprovenBurst: 1500, TrackedIPs: 1024})
	ss := s.newSession()
	scratch := make([]byte, ScratchSize)
	s.process(ss, req, scratch, src, nil, nil) // the tables' first sets
	if n := testing.AllocsPerRun(1000, func() {
		s.beginBatch(ss, time.Now())
		if len(s.process(ss, req, scratch, src, nil, nil)) != 1 {
			t.Fatal("not answered")
		}
		ss.flush()
	}); n != 0 {
		t.Errorf("an answer through the host-wide budget: %v allocations; want 0", n)
	}
}

// BenchmarkProcessA2SInfoHost is BenchmarkProcessA2SInfo with the
// host-wide per-IP budget on: the cost of the second bucket.
func BenchmarkProcessA2SInfoHost(b *testing.B) {
	host, err := NewHostBudget(HostLimits{PerIPRate: 1 << 40, PerIPBurst: 1 << 30, TrackedIPs: 1024})
	if err != nil {
		b.Fatal(err)
	}
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	servers, req := hostBudgetServers(b, 1, 1<<30, host, src)
	s := servers[0]
	s.SetLimits(Limits{PerIPRate: 1 << 40, PerIPBurst: 1 << 30, UnprovenRate: 1, UnprovenBurst: 1500, TrackedIPs: 1024})
	ss := s.newSession()
	scratch := make([]byte, ScratchSize)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.beginBatch(ss, time.Now())
		if out := s.process(ss, req, scratch, src, nil, nil); len(out) != 1 {
			b.Fatal("not answered")
		}
		if i%16 == 15 {
			ss.flush()
		}
	}
}

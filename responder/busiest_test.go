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

// busyFixture is a server with the token-checking A2S_INFO handler of the
// benchmark and one receive loop's session, served by hand.
type busyFixture struct {
	s       *Server
	ss      *session
	is      *challenge.Issuer
	scratch []byte
}

func newBusyFixture(t testing.TB) *busyFixture {
	t.Helper()
	clock := &dgram.Clock{}
	is := challenge.NewWithKey([16]byte{7}, clock.Now)
	s, err := New(Config{Listen: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, Registry: prometheus.NewRegistry(), Clock: clock},
		&infoHandler{is: is, reply: make([]byte, 120)})
	if err != nil {
		t.Fatal(err)
	}
	return &busyFixture{s: s, ss: s.newSession(), is: is, scratch: make([]byte, ScratchSize)}
}

// send serves one A2S_INFO from src, with a valid token when valid
// (answered) or a wrong one (ignored).
func (f *busyFixture) send(src netip.AddrPort, valid bool) {
	req := append([]byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00"), 0, 0, 0, 0)
	tok := f.is.Token(src.Addr())
	if !valid {
		tok++
	}
	binary.LittleEndian.PutUint32(req[25:], tok)
	f.s.process(f.ss, req, f.scratch, src, nil, nil)
}

// drained returns DrainSources summed per source.
func drained(s *Server) map[netip.Prefix]SourceCount {
	out := map[netip.Prefix]SourceCount{}
	for _, sc := range s.DrainSources(nil) {
		m := out[sc.Source]
		m.Source = sc.Source
		m.Requests += sc.Requests
		for i, n := range sc.Outcomes {
			m.Outcomes[i] += n
		}
		out[sc.Source] = m
	}
	return out
}

func outcomeIndex(t *testing.T, label string) int {
	t.Helper()
	for i, l := range SourceOutcomes {
		if l == label {
			return i
		}
	}
	t.Fatalf("no source outcome %q", label)
	return -1
}

// With room in the table every source is counted exactly, with its
// outcome mix, IPv4 by address and IPv6 by /64; a drain clears the tables.
func TestBusiestSourcesExact(t *testing.T) {
	f := newBusyFixture(t)
	a := netip.MustParseAddrPort("127.0.0.2:1000")
	b := netip.MustParseAddrPort("127.0.0.3:1000")
	v6a := netip.MustParseAddrPort("[2001:db8:1:2::1]:1000")
	v6b := netip.MustParseAddrPort("[2001:db8:1:2::ffff]:2000") // the same /64
	f.s.beginBatch(f.ss, time.Now())
	for i := 0; i < 5; i++ {
		f.send(a, true)
	}
	f.send(a, false)
	f.send(b, true)
	f.send(v6a, true)
	f.send(v6b, false)
	f.s.process(f.ss, []byte("not a query"), f.scratch, b, nil, nil)
	f.ss.flush()

	got := drained(f.s)
	ans, ign, unk := outcomeIndex(t, "answered"), outcomeIndex(t, "ignored"), outcomeIndex(t, "unknown")
	for _, c := range []struct {
		src           string
		n, a, ig, unk uint64
	}{
		{"127.0.0.2/32", 6, 5, 1, 0},
		{"127.0.0.3/32", 2, 1, 0, 1},
		{"2001:db8:1:2::/64", 2, 1, 1, 0},
	} {
		sc, ok := got[netip.MustParsePrefix(c.src)]
		if !ok {
			t.Errorf("%s not counted; got %v", c.src, got)
			continue
		}
		if sc.Requests != c.n || sc.Outcomes[ans] != c.a || sc.Outcomes[ign] != c.ig || sc.Outcomes[unk] != c.unk {
			t.Errorf("%s: %d requests, outcomes %v; want %d (answered %d, ignored %d, unknown %d)",
				c.src, sc.Requests, sc.Outcomes, c.n, c.a, c.ig, c.unk)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d sources, want 3: %v", len(got), got)
	}
	if again := f.s.DrainSources(nil); len(again) != 0 {
		t.Errorf("a second drain found %v, want nothing", again)
	}
}

// A source that sends a third of the datagrams among 20,000 others that
// send one each stays in the table, counted at least as often as it sent.
func TestBusiestSourcesHeavyHitter(t *testing.T) {
	f := newBusyFixture(t)
	heavy := netip.MustParseAddrPort("127.9.9.9:5000")
	f.s.beginBatch(f.ss, time.Now())
	const others = 20000
	sent := uint64(0)
	for i := 0; i < others; i++ {
		ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		f.send(netip.AddrPortFrom(ip, 1), false)
		if i%2 == 0 {
			f.send(heavy, true)
			sent++
		}
	}
	f.ss.flush()
	got := drained(f.s)
	sc, ok := got[netip.MustParsePrefix("127.9.9.9/32")]
	if !ok || sc.Requests < sent {
		t.Fatalf("heavy source: %+v (present %v), want at least %d requests", sc, ok, sent)
	}
	if len(got) > topSlots {
		t.Fatalf("%d sources drained from one table of %d slots", len(got), topSlots)
	}
}

// Counting a source, also one that takes another's slot, allocates nothing.
func TestBusiestSourcesNoAlloc(t *testing.T) {
	f := newBusyFixture(t)
	req := append([]byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00"), 0, 0, 0, 0)
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		i++
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 1)
		f.s.beginBatch(f.ss, time.Now())
		f.s.process(f.ss, req, f.scratch, src, nil, nil)
		f.ss.flush()
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per datagram, want 0", allocs)
	}
}

// BenchmarkSourceTableCount measures what the busiest sources add per
// datagram: counting one in the loop's table (a source already there, and
// a new source taking a slot), plus one lock and unlock per batch of 64.
func BenchmarkSourceTableCount(b *testing.B) {
	for _, c := range []struct {
		name    string
		sources int
	}{{"one_source", 1}, {"1024_sources", 1024}} {
		b.Run(c.name, func(b *testing.B) {
			var t sourceTable
			keys := make([]ipKey, c.sources)
			for i := range keys {
				keys[i] = keyOf(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}))
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%batchOf == 0 {
					t.end()
					t.begin()
				}
				t.count(keys[i%len(keys)], int(dgram.Answered))
			}
			t.end()
		})
	}
}

// batchOf is the receive batch BenchmarkSourceTableCount assumes.
const batchOf = 64

package responder

import (
	"encoding/binary"
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/dgram"
)

// infoHandler is an A2S_INFO handler cut to what the responder sees of the
// real one (the responder's tests import no protocol package): it checks
// the request's token with the issuer and answers a pre-encoded reply.
type infoHandler struct {
	is    *challenge.Issuer
	reply []byte
}

func (h *infoHandler) Name() string { return "a2s" }

func (h *infoHandler) Claims(p []byte) bool {
	return len(p) >= 5 && string(p[:5]) == "\xFF\xFF\xFF\xFFT"
}

func (h *infoHandler) Answer(req []byte, src netip.AddrPort, _ []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	if len(req) != 29 || !h.is.Valid(src.Addr(), binary.LittleEndian.Uint32(req[25:])) {
		return out, dgram.Ignored
	}
	return append(out, h.reply), dgram.Answered
}

var _ Handler = (*infoHandler)(nil)

// BenchmarkProcessA2SInfo measures the per-datagram work of the responder
// around a handler (route, budgets, metrics) with a token-checking A2S_INFO
// handler (infoHandler) and a token-bearing A2S_INFO: it must allocate
// nothing.
func BenchmarkProcessA2SInfo(b *testing.B) {
	clock := &dgram.Clock{}
	is := challenge.NewWithKey([16]byte{1}, clock.Now)
	h := &infoHandler{is: is, reply: make([]byte, 120)}
	s, err := New(Config{Listen: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, Registry: prometheus.NewRegistry(), Clock: clock}, h)
	if err != nil {
		b.Fatal(err)
	}
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	req := append([]byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(req[25:], is.Token(src.Addr()))
	ss := s.newSession()
	scratch := make([]byte, ScratchSize)
	s.SetLimits(Limits{PerIPRate: 1 << 40, PerIPBurst: 1 << 30, UnprovenRate: 1, UnprovenBurst: 1500, TrackedIPs: 1024})
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

// An unclaimed datagram (counted as unknown) costs no allocation with the
// logger above debug level: the batch's debug flag is one bool test.
func TestProcessUnclaimedAllocs(t *testing.T) {
	clock := &dgram.Clock{}
	is := challenge.NewWithKey([16]byte{1}, clock.Now)
	h := &infoHandler{is: is, reply: make([]byte, 120)}
	s, err := New(Config{Listen: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, Registry: prometheus.NewRegistry(), Clock: clock,
		Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))}, h)
	if err != nil {
		t.Fatal(err)
	}
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	req := []byte("\xFF\xFF\xFF\xFFstatus\n")
	ss := s.newSession()
	scratch := make([]byte, ScratchSize)
	if n := testing.AllocsPerRun(1000, func() {
		s.beginBatch(ss, time.Now())
		s.process(ss, req, scratch, src, nil, nil)
		ss.flush()
	}); n != 0 {
		t.Errorf("an unclaimed datagram at info level: %v allocations; want 0", n)
	}
}

// BenchmarkProcessShed measures what a request the proven-source tier
// sheds costs the responder (route, the gate, the proven set's lookup,
// the count: no Answer), from sources that change every request, as in a
// spoofed flood: it must allocate nothing.
func BenchmarkProcessShed(b *testing.B) {
	clock := &dgram.Clock{}
	is := challenge.NewWithKey([16]byte{1}, clock.Now)
	h := &infoHandler{is: is, reply: make([]byte, 120)}
	s, err := New(Config{Listen: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, Registry: prometheus.NewRegistry(), Clock: clock}, h)
	if err != nil {
		b.Fatal(err)
	}
	req := []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")
	ss := s.newSession()
	scratch := make([]byte, ScratchSize)
	s.SetLimits(Limits{PerIPRate: 1 << 40, PerIPBurst: 1 << 30, UnprovenRate: 1, UnprovenBurst: 1500, TrackedIPs: 65536,
		UnprovenPacketRate: 1, UnprovenPacketBurst: 1, ProvenFor: time.Minute})
	s.limit.Load().gateDraw(ss.id, time.Now()) // spent for the next second
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.beginBatch(ss, time.Now())
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}), 40000)
		if out := s.process(ss, req, scratch, src, nil, nil); len(out) != 0 {
			b.Fatal("answered")
		}
		if i%16 == 15 {
			ss.flush()
		}
	}
	b.StopTimer()
	ss.flush()
	var n uint64
	for r := range ss.stats.req {
		n += ss.stats.req[r][outUnprovenShed].Load()
	}
	if n != uint64(b.N) {
		b.Fatalf("%d of %d counted unproven_shed", n, b.N)
	}
}

package responder

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/state"
	"github.com/queryd/queryd/wire"
)

// BenchmarkProcessA2SInfo measures the per-datagram work of the responder
// around a handler (route, budgets, metrics) with the real A2S handler and
// a token-bearing A2S_INFO: it must allocate nothing.
func BenchmarkProcessA2SInfo(b *testing.B) {
	clock := &wire.Clock{}
	is := challenge.NewWithKey([16]byte{1}, clock.Now)
	h := a2s.NewHandler(a2s.Config{AppID: 480, InfoChallenge: true}, is, clock.Now)
	st, err := state.NewStore(map[string]any{"name": "bench", "map": "m"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	st.Subscribe(h.Update)
	s, err := New(Config{Listen: []string{"127.0.0.1:0"}, Registry: prometheus.NewRegistry(), Clock: clock}, h)
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
		s.beginBatch(ss)
		if out := s.process(ss, req, scratch, src, nil, nil); len(out) != 1 {
			b.Fatal("not answered")
		}
		if i%16 == 15 {
			ss.flush()
		}
	}
}

package status_test

import (
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/status"
	"github.com/queryd/queryd/responder"
)

// The busiest sources merge what the XDP fast path counted in the driver
// (FastSources) with the socket path's drain: a source only the program
// answered is listed, and one both paths saw is listed once with both
// counts summed.
func TestStatusFastSources(t *testing.T) {
	f := newFakeDaemon(t)
	f.drains = [][]responder.SourceCount{{source("198.18.0.9/32", 5, map[int]uint64{1: 5})}}
	src := f.source()
	src.FastSources = func(dst []responder.SourceCount) []responder.SourceCount {
		return append(dst,
			source("198.18.0.2/32", 200, map[int]uint64{0: 200}),
			source("198.18.0.9/32", 7, map[int]uint64{0: 7}))
	}
	s := status.New(src, nil)
	t0 := time.Unix(1_000_000, 0)
	s.Sample(t0)
	got := s.Report(t0.Add(time.Second)).Busiest.Sources
	want := []status.SourceReport{
		{Source: "198.18.0.2", Requests: 200, Outcomes: map[string]uint64{"answered": 200}},
		{Source: "198.18.0.9", Requests: 12, Outcomes: map[string]uint64{"answered": 7, "challenged": 5}},
	}
	if len(got) != len(want) {
		t.Fatalf("busiest %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Source != want[i].Source || got[i].Requests != want[i].Requests || !mapsEqual(got[i].Outcomes, want[i].Outcomes) {
			t.Errorf("busiest %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

package status

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/queryd/queryd/responder"
)

// The busiest sources' window.
const (
	// BusiestWindow is the seconds the busiest sources are summed over.
	BusiestWindow = 60
	// busiestKeep is how many sources each second keeps.
	busiestKeep = 32
	// BusiestShown is how many sources the page lists.
	BusiestShown = 10
)

// minute holds the busiest sources of the last BusiestWindow seconds: per
// second, the busiestKeep sources with the most requests (all receive
// loops together). Its memory is fixed.
type minute struct {
	secs  [BusiestWindow]topSecond
	next  int
	drain []responder.SourceCount // reused for every drain
	index map[netip.Prefix]int    // reused for every merge
}

// topSecond is one second's busiest sources, busiest first.
type topSecond struct {
	n   int
	top [busiestKeep]responder.SourceCount
}

// add records one second's drain of the receive loops' tables.
func (w *minute) add(drained []responder.SourceCount) {
	merged := w.merge(drained)
	s := &w.secs[w.next]
	s.n = copy(s.top[:], merged)
	w.next = (w.next + 1) % BusiestWindow
}

// merge sums the counts of each source (several loops, or seconds, may
// have seen it), busiest first; the result reuses w's buffer.
func (w *minute) merge(counts []responder.SourceCount) []responder.SourceCount {
	if w.index == nil {
		w.index = map[netip.Prefix]int{}
	}
	clear(w.index)
	out := w.drain[:0]
	for _, sc := range counts {
		i, ok := w.index[sc.Source]
		if !ok {
			w.index[sc.Source] = len(out)
			out = append(out, sc)
			continue
		}
		out[i].Requests += sc.Requests
		for o, n := range sc.Outcomes {
			out[i].Outcomes[o] += n
		}
	}
	slices.SortFunc(out, func(a, b responder.SourceCount) int {
		if c := cmp.Compare(b.Requests, a.Requests); c != 0 {
			return c
		}
		return a.Source.Addr().Compare(b.Source.Addr())
	})
	w.drain = out
	return out
}

// top returns the n busiest sources of the window (a new slice).
func (w *minute) top(n int) []responder.SourceCount {
	var all []responder.SourceCount
	for i := range w.secs {
		all = append(all, w.secs[i].top[:w.secs[i].n]...)
	}
	var tmp minute
	merged := tmp.merge(all)
	return slices.Clone(merged[:min(n, len(merged))])
}

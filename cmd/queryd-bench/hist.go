package main

import "math/bits"

// Latency histogram: log-linear buckets over nanoseconds, 32 per power of
// two (about 3 % resolution), exact below 64 ns. Recording is a few
// instructions and allocates nothing.
const (
	histSub     = 5 // log2 of the buckets per power of two
	histBuckets = 64 << histSub
)

type hist struct {
	counts [histBuckets]uint64
	n      uint64
}

func histIndex(v uint64) int {
	if v < 2<<histSub {
		return int(v)
	}
	s := bits.Len64(v) - histSub - 1
	i := s<<histSub + int(v>>s)
	return min(i, histBuckets-1)
}

// histValue is the middle of bucket i.
func histValue(i int) uint64 {
	if i < 2<<histSub {
		return uint64(i)
	}
	s := i>>histSub - 1
	m := uint64(i&(1<<histSub-1) | 1<<histSub)
	return m<<s + (uint64(1)<<s)/2
}

func (h *hist) record(ns int64) {
	if ns < 0 {
		ns = 0
	}
	h.counts[histIndex(uint64(ns))]++
	h.n++
}

func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// quantile returns the value (ns) at quantile q (0..1), or 0 when empty.
func (h *hist) quantile(q float64) uint64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n-1)) + 1
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return histValue(i)
		}
	}
	return histValue(histBuckets - 1)
}

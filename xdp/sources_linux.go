//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"errors"
	"net/netip"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/queryd/queryd/responder"
)

// The program counts the requests it answers or drops per source (IPv4
// address or IPv6 /64, as the budgets see it) in the sources map, an LRU
// hash of MAX_SOURCES (4,096) entries: under a flood from more sources
// than that within a second the least recent are forgotten, as the socket
// path's table forgets its least counted. DrainSources reads and empties
// it.

// sourceBuf is the drain's reused batch buffer.
type sourceBuf struct {
	keys []querydSrckey
	vals []querydSourceCount
}

// DrainSources appends the sources the program answered or dropped for
// every server since the last call to dst (DrainServerSources: one
// server's), with their outcomes in responder.SourceOutcomes' order, and
// forgets them.
func (f *FastPath) DrainSources(dst []responder.SourceCount) []responder.SourceCount {
	f.mu.Lock() // a batch or two of syscalls, once a second
	defer f.mu.Unlock()
	f.drainLocked()
	for _, s := range f.byIndex {
		if s != nil {
			dst = append(dst, s.pending...)
			s.pending = s.pending[:0]
		}
	}
	return dst
}

// DrainServerSources is DrainSources for one server: the status page of
// that server merges them into its busiest sources (with the socket
// path's, responder.Server.DrainSources).
func (f *FastPath) DrainServerSources(server string, dst []responder.SourceCount) []responder.SourceCount {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drainLocked()
	if s := f.servers[server]; s != nil {
		dst = append(dst, s.pending...)
		s.pending = s.pending[:0]
	}
	return dst
}

// drainLocked moves the sources map's entries to their servers' pending
// lists (each at most the map's size: a server nobody drains keeps its
// latest).
func (f *FastPath) drainLocked() {
	if f.closed {
		return
	}
	b := &f.drained
	n := int(f.maps.Sources.MaxEntries())
	if b.keys == nil {
		b.keys = make([]querydSrckey, n)
		b.vals = make([]querydSourceCount, n)
	}
	var cursor ebpf.MapBatchCursor
	for {
		got, err := f.maps.Sources.BatchLookupAndDelete(&cursor, b.keys, b.vals, nil)
		for i := range got {
			s := f.serverAt(b.keys[i].Server)
			if s == nil {
				continue
			}
			if len(s.pending) >= n {
				s.pending = s.pending[:copy(s.pending, s.pending[len(s.pending)-n/2:])]
			}
			s.pending = append(s.pending, sourceCountOf(b.keys[i].Ip, b.vals[i]))
		}
		if err != nil {
			if !errors.Is(err, ebpf.ErrKeyNotExist) {
				f.log.Debug("XDP: draining the per-source counts", "err", err)
			}
			return
		}
	}
}

// serverAt is the server of index i, or nil.
func (f *FastPath) serverAt(i uint32) *server {
	if int(i) >= len(f.byIndex) {
		return nil
	}
	return f.byIndex[i]
}

// sourceOutcome maps the program's outcome columns to the indexes of
// responder.SourceOutcomes, by their labels (answered without a token is
// answered).
var sourceOutcome = func() (idx [len(outcomeLabel)]int) {
	for o, label := range outcomeLabel {
		idx[o] = slices.Index(responder.SourceOutcomes[:], label)
	}
	return idx
}()

// sourceCountOf is one entry of the sources map as the status page counts
// sources: an IPv4-mapped key is the IPv4 address's /32, any other an
// IPv6 /64.
func sourceCountOf(k querydIpkey, v querydSourceCount) responder.SourceCount {
	a := netip.AddrFrom16(k.B)
	sc := responder.SourceCount{Source: netip.PrefixFrom(a, 64)}
	if a.Is4In6() {
		sc.Source = netip.PrefixFrom(a.Unmap(), 32)
	}
	for o, n := range v.N {
		sc.Requests += n
		if o < len(sourceOutcome) && sourceOutcome[o] >= 0 {
			sc.Outcomes[sourceOutcome[o]] += n
		}
	}
	return sc
}

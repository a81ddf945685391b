//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"errors"
	"net/netip"
	"slices"
	"time"

	"github.com/cilium/ebpf"

	"github.com/queryd/queryd/responder"
)

// The program counts the requests it answers or drops per source (IPv4
// address or IPv6 /64, as the budgets see it): a request answered with a
// reply no larger than itself (a challenge) in the seen table, a slot per
// CPU and hash of the source (NSEEN, 1,024, each; the program looks no
// budget entry up for it and makes none); one whose answer amplifies, in
// the source's budget entry (perip, struct peer), which it looked up for
// the budget anyway; and else (dropped before a reply: stale, denied, over
// a packet rate) in the sources map, an LRU hash of MAX_SOURCES (4,096)
// entries. Under a flood from more sources than the maps hold within a
// second the least recent are forgotten (in the seen table: a slot goes to
// the latest source of its hash), as the socket path's table forgets its
// least counted. DrainSources reads and empties them.

// peerBatch is how many budget entries one batch lookup reads.
const peerBatch = 1024

// peerDrainEvery is how often at most the budget entries are read: the
// status page of each server asks once a second, the first of a round
// reads every server's.
const peerDrainEvery = 250 * time.Millisecond

// sourceBuf is the drain's reused batch buffers and its period.
type sourceBuf struct {
	keys  []querydSrckey
	vals  []querydSourceCount
	pkeys []querydSrckey
	pvals []querydPeer
	seen  []querydSeen  // one slot of the seen table, every CPU's
	last  time.Time     // when the budget entries were last read
	every time.Duration // peerDrainEvery (tests: 0)
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

// drainLocked moves the sources map's entries, and the finished period's
// counts of the budget entries, to their servers' pending lists (each at
// most the sources map's size: a server nobody drains keeps its latest).
func (f *FastPath) drainLocked() {
	if f.closed {
		return
	}
	f.drainPeers()
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
			f.addPending(b.keys[i], sourceCountOf(b.keys[i].Ip, b.vals[i].N[:]))
		}
		if err != nil {
			if !errors.Is(err, ebpf.ErrKeyNotExist) {
				f.log.Debug("XDP: draining the per-source counts", "err", err)
			}
			return
		}
	}
}

// drainPeers ends the program's drain period when it counted anything in
// a budget entry since the last (the dirty flag), and moves the ended
// period's counts to the pending lists: the program counts into the other
// half of each entry from the new period on, so the ended half stays as
// it is while it is read. At most once per peerDrainEvery.
func (f *FastPath) drainPeers() {
	b := &f.drained
	now := time.Now()
	if now.Sub(b.last) < b.every {
		return
	}
	var d querydDrain
	if err := f.maps.DrainMap.Lookup(uint32(0), &d); err != nil {
		f.log.Debug("XDP: reading the drain period", "err", err)
		return
	}
	if d.Dirty == 0 {
		return
	}
	b.last = now
	ended := d.Gen
	next := querydDrain{Gen: ended + 1}
	if next.Gen == 0 {
		next.Gen = 1
	}
	if err := f.maps.DrainMap.Put(uint32(0), &next); err != nil {
		f.log.Debug("XDP: starting a drain period", "err", err)
		return
	}
	if b.pkeys == nil {
		b.pkeys = make([]querydSrckey, peerBatch)
		b.pvals = make([]querydPeer, peerBatch)
	}
	f.drainSeen(ended)
	h := ended & 1
	var cursor ebpf.MapBatchCursor
	for {
		got, err := f.maps.Perip.BatchLookup(&cursor, b.pkeys, b.pvals, nil)
		for i := range got {
			if v := &b.pvals[i]; v.CountGen[h] == ended {
				f.addPending(b.pkeys[i], sourceCountOf(b.pkeys[i].Ip, v.N[h][:]))
			}
		}
		if err != nil {
			if !errors.Is(err, ebpf.ErrKeyNotExist) {
				f.log.Debug("XDP: draining the budget entries' counts", "err", err)
			}
			return
		}
	}
}

// drainSeen moves the seen table's counts of period ended, every CPU's
// slots of one source summed, to the pending lists. The program counts
// the next period from 0 in the same slots: nothing to empty.
func (f *FastPath) drainSeen(ended uint32) {
	b := &f.drained
	m := f.maps.SeenMap
	n := int(m.MaxEntries())
	if b.seen == nil {
		b.seen = make([]querydSeen, f.ncpu)
	}
	sums := make(map[querydSrckey]*[len(querydSeen{}.N)]uint64)
	var order []querydSrckey
	for i := range n {
		per := b.seen
		if err := m.Lookup(uint32(i), per); err != nil {
			f.log.Debug("XDP: draining the seen table", "err", err)
			return
		}
		for c := range per {
			e := &per[c]
			if e.Gen != ended {
				continue
			}
			sum := sums[e.Key]
			if sum == nil {
				sum = new([len(querydSeen{}.N)]uint64)
				sums[e.Key] = sum
				order = append(order, e.Key)
			}
			for o, v := range e.N {
				sum[o] += uint64(v)
			}
		}
	}
	for _, k := range order {
		f.addPending(k, sourceCountOf(k.Ip, sums[k][:]))
	}
}

// addPending adds one source's counts (by the program's outcomes) to its
// server's pending list, unless it has none.
func (f *FastPath) addPending(k querydSrckey, sc responder.SourceCount) {
	s := f.serverAt(k.Server)
	if s == nil || sc.Requests == 0 {
		return
	}
	if n := int(f.maps.Sources.MaxEntries()); len(s.pending) >= n {
		s.pending = s.pending[:copy(s.pending, s.pending[len(s.pending)-n/2:])]
	}
	s.pending = append(s.pending, sc)
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

// sourceCountOf is one source's counts by the program's outcomes (an
// entry of the sources map, or a period of a budget entry) as the status
// page counts sources: an IPv4-mapped key is the IPv4 address's /32, any
// other an IPv6 /64.
func sourceCountOf[T uint32 | uint64](k querydIpkey, counts []T) responder.SourceCount {
	a := netip.AddrFrom16(k.B)
	sc := responder.SourceCount{Source: netip.PrefixFrom(a, 64)}
	if a.Is4In6() {
		sc.Source = netip.PrefixFrom(a.Unmap(), 32)
	}
	for o, n := range counts {
		sc.Requests += uint64(n)
		if o < len(sourceOutcome) && sourceOutcome[o] >= 0 {
			sc.Outcomes[sourceOutcome[o]] += uint64(n)
		}
	}
	return sc
}

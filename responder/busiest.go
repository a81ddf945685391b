package responder

import (
	"net/netip"
	"sync"
	"time"
)

// The busiest sources: every receive loop counts the requests of each
// source (an IPv4 address or IPv6 /64, as the per-IP budgets see it) in a
// small fixed table of its own, a "space-saving" table made
// set-associative: a source hashes to one set of topWays slots; a source
// already there is counted in its slot, a new one takes the set's least
// counted slot and, as space-saving does, starts from that slot's count
// plus one. A source that sends more than a topWays-th of its set's
// datagrams always holds a slot. Counting a datagram is a hash and at most
// topWays key comparisons on the loop's own memory: no lock, no atomic
// operation, no allocation. The loop holds its table's mutex for a whole
// receive batch (one lock and unlock per batch, never contended but once a
// second); DrainSources takes it between batches to copy and clear the
// table.
const (
	topSets  = 16
	topWays  = 4
	topSlots = topSets * topWays
)

// SourceOutcomes are the labels of SourceCount.Outcomes, in order: the
// outcomes of queryd_requests_total.
var SourceOutcomes = [numSourceOutcomes]string{
	"answered", "challenged", "malformed", "ignored",
	"rate_limited", "unknown", "stale", "forwarded", "panic", "denied", "relay_dropped",
	"host_rate_limited", "unproven_shed",
}

// numSourceOutcomes is the number of SourceOutcomes: the responder's
// outcomes with AnsweredOpen counted as answered.
const numSourceOutcomes = numOutcomes - 1

// sourceOutcome maps a responder outcome to its SourceOutcomes index.
func sourceOutcome(o int) int {
	if o > 0 { // AnsweredOpen (1) joins Answered (0); the rest move down one
		return o - 1
	}
	return 0
}

// SourceCount is one source's requests in a DrainSources.
type SourceCount struct {
	// Source is an IPv4 address (/32) or an IPv6 /64.
	Source netip.Prefix
	// Requests is the space-saving count: the source's datagrams, or more
	// by at most the count of the source it took its slot from (exact
	// while the table had room).
	Requests uint64
	// Outcomes counts, by SourceOutcomes, the datagrams the source's slot
	// saw since the source took it.
	Outcomes [numSourceOutcomes]uint64
}

// sourceTable is one receive loop's busiest-sources table.
type sourceTable struct {
	mu   sync.Mutex // held by the loop during a batch; by DrainSources to copy
	held bool       // the loop holds mu (only the loop reads or writes it)
	keys [topSlots]ipKey
	n    [topSlots]uint64
	outs [topSlots][numOutcomes]uint32
}

// sourceTables are the tables of a server's receive loops.
type sourceTables struct {
	mu     sync.Mutex
	tables []*sourceTable
}

// add makes a table for a new receive loop.
func (ts *sourceTables) add() *sourceTable {
	t := &sourceTable{}
	ts.mu.Lock()
	ts.tables = append(ts.tables, t)
	ts.mu.Unlock()
	return t
}

// begin takes the table for a receive batch (once, however often called).
func (t *sourceTable) begin() {
	if t != nil && !t.held {
		t.mu.Lock()
		t.held = true
	}
}

// end gives the table back after a receive batch.
func (t *sourceTable) end() {
	if t != nil && t.held {
		t.held = false
		t.mu.Unlock()
	}
}

// count records one datagram from source k with responder outcome o.
func (t *sourceTable) count(k ipKey, o int) {
	if t == nil {
		return
	}
	first := k.shard() * topWays // shard is 4 bits: one of the 16 sets
	least := first
	for i := first; i < first+topWays; i++ {
		if t.keys[i] == k && t.n[i] != 0 {
			t.n[i]++
			t.outs[i][o]++
			return
		}
		if t.n[i] < t.n[least] {
			least = i
		}
	}
	t.keys[least] = k
	t.n[least]++
	t.outs[least] = [numOutcomes]uint32{}
	t.outs[least][o] = 1
}

// DrainSources appends to dst what every receive loop counted since the
// last DrainSources, one entry per loop and source (a source that several
// loops saw appears once for each), and clears the tables. It waits for
// each loop's batch in progress to end. Call it from one goroutine (the
// status page's sampler, once a second).
func (s *Server) DrainSources(dst []SourceCount) []SourceCount {
	s.tops.mu.Lock()
	tables := append([]*sourceTable(nil), s.tops.tables...)
	s.tops.mu.Unlock()
	for _, t := range tables {
		t.mu.Lock()
		dst = t.drain(dst)
		t.mu.Unlock()
	}
	return dst
}

// drain appends the table's sources to dst and clears it (mu held).
func (t *sourceTable) drain(dst []SourceCount) []SourceCount {
	for i := range t.n {
		if t.n[i] == 0 {
			continue
		}
		sc := SourceCount{Source: prefixOf(t.keys[i]), Requests: t.n[i]}
		for o, c := range t.outs[i] {
			sc.Outcomes[sourceOutcome(o)] += uint64(c)
		}
		dst = append(dst, sc)
	}
	t.n = [topSlots]uint64{}
	return dst
}

// prefixOf turns a source key back into its address or /64.
func prefixOf(k ipKey) netip.Prefix {
	a := netip.AddrFrom16(k)
	if a.Is4In6() {
		return netip.PrefixFrom(a.Unmap(), 32)
	}
	return netip.PrefixFrom(a, 64)
}

// UnprovenUse returns how much of the global unproven budget is drawn at
// now: 0 when every receive loop's share is full, 1 when all are empty.
func (s *Server) UnprovenUse(now time.Time) float64 {
	lim := s.limit.Load()
	var tokens, burst float64
	for _, l := range lim.unproven {
		tokens += max(l.TokensAt(now), 0)
		burst += float64(l.Burst())
	}
	if burst == 0 {
		return 0
	}
	return min(max(1-tokens/burst, 0), 1)
}

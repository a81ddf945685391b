package responder

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// ipKey is a source as the per-source limits see it: an IPv4 address, or the
// /64 of an IPv6 address (one subscriber usually holds a whole /64).
type ipKey [16]byte

func keyOf(ip netip.Addr) ipKey {
	ip = ip.Unmap()
	k := ipKey(ip.As16())
	if ip.Is6() {
		clear(k[8:])
	}
	return k
}

// id folds k into 64 bits for the buckets: an IPv4 address is
// 0x0000ffff_aabbccdd (the low half of ::ffff:a.b.c.d), an IPv6 /64 its
// prefix. The only /64s that fold onto an IPv4 address are 0:ffff::/32's,
// inside ::/8 (reserved, never routed); one of them would share the budget
// of the address it spells.
func (k ipKey) id() uint64 {
	hi := binary.BigEndian.Uint64(k[:8])
	if hi == 0 && binary.BigEndian.Uint32(k[8:12]) == 0xffff {
		return binary.BigEndian.Uint64(k[8:])
	}
	return hi
}

// shards splits the per-source caches so that receive loops on different
// cores rarely wait for the same lock.
const shards = 16

// shard picks k's shard for the busiest-sources tables (busiest.go).
func (k ipKey) shard() int {
	h := binary.LittleEndian.Uint64(k[:8]) ^ binary.LittleEndian.Uint64(k[8:])
	return int((h * 0x9E3779B97F4A7C15) >> 60)
}

// bucketWays is how many sources share one set of a bucket table: four
// 16-byte slots, one cache line.
const bucketWays = 4

// sourceBuckets is a token bucket per source, for about tracked sources, in
// a compact table: one cache line per source looked up, 16 bytes a source.
// The per-IP byte budget (tokens are reply bytes) and the per-source packet
// rate (tokens are requests) are both one of these.
//
// Each bucket is GCRA, the token bucket kept as one time: tat, when the
// bucket would be full again. n tokens may be taken at now when
// max(tat, now) + cost(n) − now ≤ the burst's cost; taking them sets tat to
// max(tat, now) + cost(n) (gcra.go holds the arithmetic, which the fast
// path shares). A bucket whose tat has passed
// is full: it holds nothing a fresh bucket would not.
//
// The table is split in shards, each behind its own lock, each an array of
// sets of bucketWays slots. A source hashes (keyed by a random seed, so that
// no one can aim sources at another's set) to one shard and one set; a
// source not found there takes the set's slot with the earliest tat (a full
// bucket if there is one) and starts with a full bucket. A shard starts
// with one set and doubles, up to its share of tracked, when a new source
// would push out a bucket that is not full: memory follows the sources that
// hold state, and growing allocates only while their number grows, a
// bounded number of times.
//
// Receive loops on several cores share a bucket, each handing it the time
// its own batch began, so times arrive out of order. GCRA never moves tat
// back and only compares it with the time handed in, so an older time only
// ever allows less: no interleaving of loops credits an interval twice.
// Times are taken on the monotonic clock (time.Time.Sub against the
// table's start): a step of the wall clock neither freezes nor refills a
// bucket.
type sourceBuckets struct {
	gcra    GCRA // what tokens cost, and how far ahead of now a bucket may run
	maxSets int  // each shard's most sets: a power of two
	start   time.Time
	seed    [2]uint64
	shards  [shards]bucketShard
}

// epoch keeps every time handed in positive, so that an unused slot (tat 0)
// is always a full bucket, even for times before start.
const epoch = int64(1) << 62

// bucketShard is one shard's sets behind its own lock.
type bucketShard struct {
	mu    sync.Mutex
	shift uint8 // 64 − log2(len(sets)): a hash's top bits pick its set
	sets  []bucketSet
	_     [24]byte // one shard per cache line: loops on other shards do not share it
}

// bucketSet is one set's slots.
type bucketSet [bucketWays]bucketSlot

// bucketSlot is one source's bucket.
type bucketSlot struct {
	id  uint64 // ipKey.id
	tat int64  // when the bucket is full again (0: unused)
}

// newSourceBuckets makes buckets of r tokens per second and burst tokens,
// remembering at least tracked sources.
func newSourceBuckets(r rate.Limit, burst, tracked int) (*sourceBuckets, error) {
	if !(r > 0) || math.IsInf(float64(r), 0) || burst < 1 || tracked < 1 {
		return nil, fmt.Errorf("per-source buckets: want a positive finite rate, burst and size, got %v, %d, %d", r, burst, tracked)
	}
	b := &sourceBuckets{gcra: NewGCRA(float64(r), burst), start: time.Now()}
	perShard := (tracked + shards - 1) / shards
	b.maxSets = 1 << bits.Len(uint((perShard+bucketWays-1)/bucketWays-1))
	var seed [16]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("per-source buckets: seed: %w", err)
	}
	b.seed = [2]uint64{binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])}
	for i := range b.shards {
		b.shards[i].resize(1)
	}
	return b, nil
}

// cost is n tokens' time in nanoseconds, rounded up.
func (b *sourceBuckets) cost(n int) int64 { return b.gcra.Cost(n) }

// mix64 is splitmix64's finalizer: a bijection of 64 bits in which every
// input bit moves every output bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// hash is source id's place: its low bits pick the shard, its top bits the
// set.
func (b *sourceBuckets) hash(id uint64) uint64 {
	return mix64(mix64(id+b.seed[0]) ^ b.seed[1])
}

// allowN reports whether n tokens may be taken from source k's bucket at now,
// and takes them if so. A source not seen yet (or forgotten) starts with a
// full bucket.
func (b *sourceBuckets) allowN(k ipKey, n int, now time.Time) bool {
	t := int64(now.Sub(b.start)) + epoch
	id := k.id()
	h := b.hash(id)
	cost := b.cost(n)
	s := &b.shards[h&(shards-1)]
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, found := s.find(id, h)
	for !found && slot.tat > t && len(s.sets) < b.maxSets {
		s.grow(b, t)
		slot, found = s.find(id, h)
	}
	tat := t
	if found {
		tat = max(slot.tat, t)
	}
	if tat+cost-t > b.gcra.Tolerance() {
		return false
	}
	*slot = bucketSlot{id: id, tat: tat + cost}
	return true
}

// find returns source id's slot in its set and true, or the slot it would
// take (the earliest tat) and false.
func (s *bucketShard) find(id, h uint64) (*bucketSlot, bool) {
	set := &s.sets[h>>s.shift]
	slot := &set[0]
	for i := range set {
		if set[i].id == id && set[i].tat != 0 { // an unused slot's id 0 is no one's
			return &set[i], true
		}
		if set[i].tat < slot.tat {
			slot = &set[i]
		}
	}
	return slot, false
}

// resize gives s n empty sets (n a power of two).
func (s *bucketShard) resize(n int) {
	s.sets = make([]bucketSet, n)
	s.shift = uint8(64 - bits.TrailingZeros(uint(n)))
}

// grow doubles s's sets and moves into them the buckets not full at t; in
// the rare set that gets more of them than it holds, the earliest go.
func (s *bucketShard) grow(b *sourceBuckets, t int64) {
	old := s.sets
	s.resize(2 * len(old))
	for i := range old {
		for _, sl := range old[i] {
			if sl.tat <= t {
				continue
			}
			if dst, _ := s.find(sl.id, b.hash(sl.id)); dst.tat < sl.tat {
				*dst = sl
			}
		}
	}
}

// len returns how many slots hold a source: at most tracked rounded up to
// a power of two per shard.
func (b *sourceBuckets) len() int {
	n := 0
	for i := range b.shards {
		s := &b.shards[i]
		s.mu.Lock()
		for j := range s.sets {
			for _, sl := range s.sets[j] {
				if sl.tat != 0 {
					n++
				}
			}
		}
		s.mu.Unlock()
	}
	return n
}

package responder

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
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

// shards splits the per-source caches so that receive loops on different
// cores rarely wait for the same lock.
const shards = 16

func (k ipKey) shard() int {
	h := binary.LittleEndian.Uint64(k[:8]) ^ binary.LittleEndian.Uint64(k[8:])
	return int((h * 0x9E3779B97F4A7C15) >> 60)
}

// sourceBuckets is a token bucket per source, kept for the most recently seen
// sources in an LRU cache split in shards. The per-IP byte budget (tokens are
// reply bytes) and the per-source packet rate (tokens are requests) are both
// one of these.
//
// Receive loops on several cores share a bucket, each handing it the time its
// own batch began, so times arrive out of order. A rate.Limiter handed a time
// older than the last one it granted at moves its clock back and credits the
// interval again (at 1/s, burst 10, one request every 50 ms alternating
// between two loops whose clocks are 0.5 s apart: 22 requests in 9.5 s, not
// 19). So each bucket remembers the latest time it was handed and uses that
// instead of an older one; the check and the limiter's update happen under the
// shard's lock, so no interleaving of loops slips an older time in. Times are
// compared with time.Time.Before, on the monotonic clock: a step of the wall
// clock neither freezes nor refills a bucket.
type sourceBuckets struct {
	rate   rate.Limit
	burst  int
	shards [shards]bucketShard
}

// bucketShard is one shard's sources behind its own lock.
type bucketShard struct {
	mu      sync.Mutex
	sources *simplelru.LRU[ipKey, *bucket]
	_       [48]byte // one shard per cache line: loops on other shards do not share it
}

// bucket is one source's token bucket.
type bucket struct {
	last time.Time // the latest time handed to lim
	lim  *rate.Limiter
}

// newSourceBuckets makes buckets of r tokens per second and burst tokens,
// remembering about tracked sources (at least one per shard).
func newSourceBuckets(r rate.Limit, burst, tracked int) (*sourceBuckets, error) {
	b := &sourceBuckets{rate: r, burst: burst}
	for i := range b.shards {
		c, err := simplelru.NewLRU[ipKey, *bucket](max(tracked/shards, 1), nil)
		if err != nil {
			return nil, fmt.Errorf("per-source cache: %w", err)
		}
		b.shards[i].sources = c
	}
	return b, nil
}

// allowN reports whether n tokens may be taken from source k's bucket at now,
// and takes them if so. A source not seen yet (or forgotten by the LRU) starts
// with a full bucket.
func (b *sourceBuckets) allowN(k ipKey, n int, now time.Time) bool {
	s := &b.shards[k.shard()]
	s.mu.Lock()
	defer s.mu.Unlock()
	bk, ok := s.sources.Get(k)
	if !ok {
		bk = &bucket{lim: rate.NewLimiter(b.rate, b.burst)}
		s.sources.Add(k, bk)
	}
	if now.Before(bk.last) {
		now = bk.last
	} else {
		bk.last = now
	}
	return bk.lim.AllowN(now, n)
}

// len returns how many sources the buckets remember.
func (b *sourceBuckets) len() int {
	n := 0
	for i := range b.shards {
		s := &b.shards[i]
		s.mu.Lock()
		n += s.sources.Len()
		s.mu.Unlock()
	}
	return n
}

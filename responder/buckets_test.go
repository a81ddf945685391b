package responder

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// skewedRequests asks allow once every 50 ms for 9.5 s, alternately with
// the times of two receive loops whose clocks are 0.5 s apart, and returns
// how many were allowed.
func skewedRequests(allow func(now time.Time) bool) int {
	base := time.Unix(1700000000, 0)
	n := 0
	for k := 0; k <= 190; k++ {
		now := base.Add(time.Duration(k) * 50 * time.Millisecond)
		if k%2 == 1 {
			now = now.Add(-500 * time.Millisecond) // the other loop's clock
		}
		if allow(now) {
			n++
		}
	}
	return n
}

// TestPacketLimiterClockSkew: two receive loops whose batch times are 0.5 s
// apart must not let one source through faster than the rate. At 1/s, burst
// 10, over 9.5 s that is 19 requests; a limiter handed the lagging loop's
// time moves back and credits the 0.5 s again (22 went through).
func TestPacketLimiterClockSkew(t *testing.T) {
	p := newPacketLimiter(limitedHandler{1, 10}, 0)
	k := keyOf(netip.MustParseAddr("127.0.0.1"))
	if got := skewedRequests(func(now time.Time) bool { return p.allow(k, now) }); got != 19 {
		t.Fatalf("%d requests allowed in 9.5 s at 1/s burst 10, want 19", got)
	}
}

// TestByteBudgetClockSkew: the same for the per-IP byte budget (1,500 B/s,
// burst 15,000 B, 1,500-byte replies), which shares the bucket type.
func TestByteBudgetClockSkew(t *testing.T) {
	l, err := newLimiter(Limits{PerIPRate: 1500, PerIPBurst: 15000, UnprovenRate: 1, UnprovenBurst: 1500, TrackedIPs: 16}, 2)
	if err != nil {
		t.Fatal(err)
	}
	k := keyOf(netip.MustParseAddr("127.0.0.1"))
	if got := skewedRequests(func(now time.Time) bool { return l.allow(k, 1500, true, now, 0, nil) == allowed }); got != 19 {
		t.Fatalf("%d replies of 1,500 B allowed in 9.5 s at 1,500 B/s burst 15,000, want 19", got)
	}
}

// TestBucketsConcurrentSkew: loops on several goroutines, each with its own
// clock (up to 0.5 s behind the others), hammering one source at once never
// get more than the burst plus the rate over the span of the times handed in.
func TestBucketsConcurrentSkew(t *testing.T) {
	b, err := newSourceBuckets(1, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	k := keyOf(netip.MustParseAddr("127.0.0.1"))
	base := time.Unix(1700000000, 0)
	const loops, steps = 4, 2000 // 2,000 steps of 5 ms: 10 s
	var mu sync.Mutex
	allowed := 0
	var wg sync.WaitGroup
	for i := 0; i < loops; i++ {
		skew := -time.Duration(i) * 500 * time.Millisecond / (loops - 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for s := 0; s < steps; s++ {
				if b.allowN(k, 1, base.Add(time.Duration(s)*5*time.Millisecond+skew)) {
					n++
				}
			}
			mu.Lock()
			allowed += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	// Times handed in span base-0.5 s to base+9.995 s: at most 10 + 10.495.
	if allowed > 20 || allowed < 19 {
		t.Fatalf("%d requests allowed over 10.5 s of clock at 1/s burst 10, want 19 or 20", allowed)
	}
}

// TestBucketsForgetOldestSource: the buckets remember about the tracked
// number of sources; a source is forgotten only when its set is full of
// sources drained later than it, and then starts again with a full bucket.
func TestBucketsForgetOldestSource(t *testing.T) {
	b, err := newSourceBuckets(1, 1, 16) // one set of bucketWays per shard
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	first := keyOf(netip.MustParseAddr("127.0.0.1"))
	if !b.allowN(first, 1, now) || b.allowN(first, 1, now) {
		t.Fatal("want exactly the burst of 1")
	}
	added := 0
	for i := 2; ; i++ {
		if i == 2000 {
			t.Fatal("2,000 other sources did not evict the first")
		}
		now = now.Add(time.Millisecond) // every later source drains later
		k := keyOf(netip.AddrFrom4([4]byte{127, 0, byte(i >> 8), byte(i)}))
		if !b.allowN(k, 1, now) {
			t.Fatalf("source %d: a new source was refused its burst", i)
		}
		added++
		if b.allowN(first, 1, now) {
			break
		}
	}
	if added < bucketWays {
		t.Fatalf("the first source was forgotten after %d others, before its set of %d was full", added, bucketWays)
	}
	if n := b.len(); n > shards*bucketWays {
		t.Fatalf("%d sources remembered, want at most %d", n, shards*bucketWays)
	}
}

// TestBucketsFullSlotsGoFirst: a source whose bucket has filled again holds
// nothing, so a new source takes its slot before a drained one's.
func TestBucketsFullSlotsGoFirst(t *testing.T) {
	b, err := newSourceBuckets(1, 1, 16)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	drained := keyOf(netip.MustParseAddr("198.18.0.1"))
	b.allowN(drained, 1, now.Add(100*time.Second)) // full again only at +101 s
	// Thousands of sources, each full again a second later, pass through
	// every set; the drained source keeps its slot.
	for i := 0; i < 4000; i++ {
		now = now.Add(10 * time.Millisecond)
		b.allowN(keyOf(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})), 1, now)
	}
	if b.allowN(drained, 1, now) {
		t.Fatal("a drained source was forgotten while full slots were there to take")
	}
}

// TestBucketsIPv6Prefix: an IPv6 source is kept by its /64, apart from any
// IPv4 address (v4-mapped sources are the IPv4 address).
func TestBucketsIPv6Prefix(t *testing.T) {
	b, err := newSourceBuckets(1, 1, 1024)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	take := func(s string) bool { return b.allowN(keyOf(netip.MustParseAddr(s)), 1, now) }
	if !take("2001:db8:1:2::1") || take("2001:db8:1:2:ffff::9") {
		t.Fatal("two addresses of one /64 did not share a bucket")
	}
	if !take("2001:db8:1:3::1") {
		t.Fatal("another /64 shared the first one's bucket")
	}
	if !take("192.0.2.7") || take("::ffff:192.0.2.7") {
		t.Fatal("a v4-mapped source did not share its IPv4 address's bucket")
	}
	// ::/64 folds to id 0, the id of an unused slot: it still gets exactly
	// one burst.
	if !take("::1") || take("::") {
		t.Fatal("::/64 did not get exactly its burst")
	}
}

// TestBucketsRejectBadSizes: a rate, burst or size the table cannot hold is
// an error, not a table that refuses or allows everything.
func TestBucketsRejectBadSizes(t *testing.T) {
	for _, c := range []struct {
		r              float64
		burst, tracked int
	}{{0, 1, 16}, {-1, 1, 16}, {1, 0, 16}, {1, 1, 0}} {
		if _, err := newSourceBuckets(rate.Limit(c.r), c.burst, c.tracked); err == nil {
			t.Errorf("rate %v burst %d tracked %d: no error", c.r, c.burst, c.tracked)
		}
	}
}

// TestBucketsRate: a drained bucket refills at the rate, by the token,
// with the byte sizes the per-IP budget uses.
func TestBucketsRate(t *testing.T) {
	b, err := newSourceBuckets(256<<10, 64<<10, 16) // the default per-IP budget
	if err != nil {
		t.Fatal(err)
	}
	k := keyOf(netip.MustParseAddr("198.18.0.9"))
	now := time.Unix(1700000000, 0)
	if !b.allowN(k, 64<<10, now) || b.allowN(k, 1, now) {
		t.Fatal("want exactly the burst of 64 KiB")
	}
	// 1,000 B take 1000/262144 s = 3,814,698 ns.
	if b.allowN(k, 1000, now.Add(3814690*time.Nanosecond)) {
		t.Fatal("1,000 B allowed before they had refilled")
	}
	if !b.allowN(k, 1000, now.Add(3814698*time.Nanosecond)) {
		t.Fatal("1,000 B refused once they had refilled")
	}
	// A second later: 256 KiB refilled, but the bucket holds 64 KiB.
	later := now.Add(time.Second + 3814698*time.Nanosecond)
	if !b.allowN(k, 64<<10, later) || b.allowN(k, 1, later) {
		t.Fatal("a bucket idle for a second did not hold exactly its burst")
	}
}

// BenchmarkBucketsSpread: one source's bucket looked up per op, 16 sources
// over 50 servers' per-IP budgets (the default size), as in host mode's
// spread load (bench/README.md, "Host mode").
func BenchmarkBucketsSpread(b *testing.B) {
	const servers, sources = 50, 16
	var tables [servers]*sourceBuckets
	for i := range tables {
		t, err := newSourceBuckets(1<<30, 1<<20, DefaultLimits.TrackedIPs)
		if err != nil {
			b.Fatal(err)
		}
		tables[i] = t
	}
	var keys [sources]ipKey
	for i := range keys {
		keys[i] = keyOf(netip.AddrFrom4([4]byte{198, 18, 1, byte(i + 1)}))
	}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !tables[i%servers].allowN(keys[i%sources], 100, now) {
			b.Fatal("refused")
		}
		if i%1024 == 0 {
			now = time.Now()
		}
	}
}

// TestBucketsGrow: a table that starts with one set per shard grows to hold
// every source still draining, up to its size, and never past it.
func TestBucketsGrow(t *testing.T) {
	const tracked = 4096
	b, err := newSourceBuckets(1, 1, tracked)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	key := func(i int) ipKey { return keyOf(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})) }
	// An eighth of the table: a shard grows rather than push out a draining
	// source, so one is forgotten only when, at the shard's full size, five
	// fall into one set of four (about 0.2 expected; 300 runs saw at most 5,
	// a table that did not grow forgets about 480).
	const held = tracked / 8
	for i := 0; i < held; i++ {
		if !b.allowN(key(i), 1, now) {
			t.Fatalf("source %d refused its burst", i)
		}
	}
	forgotten := 0
	for i := 0; i < held; i++ {
		if b.allowN(key(i), 1, now) {
			forgotten++
		}
	}
	if forgotten > 16 {
		t.Fatalf("%d of %d draining sources forgotten in a table of %d", forgotten, held, tracked)
	}
	for i := held; i < 8*tracked; i++ {
		b.allowN(key(i), 1, now)
	}
	if n, most := b.len(), tracked; n > most || n < most/2 {
		t.Fatalf("%d sources held after a flood of %d, want at most %d and most of it", n, 8*tracked, most)
	}
	for i := range b.shards {
		if got := len(b.shards[i].sets); got != b.maxSets {
			t.Fatalf("shard %d has %d sets after the flood, want %d", i, got, b.maxSets)
		}
	}
}

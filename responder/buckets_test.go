package responder

import (
	"net/netip"
	"sync"
	"testing"
	"time"
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
	if got := skewedRequests(func(now time.Time) bool { return l.allow(k, 1500, true, now, 0) }); got != 19 {
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
// number of sources; a forgotten source starts again with a full bucket.
func TestBucketsForgetOldestSource(t *testing.T) {
	b, err := newSourceBuckets(1, 1, 16) // one source per shard
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	first := keyOf(netip.MustParseAddr("127.0.0.1"))
	if !b.allowN(first, 1, now) || b.allowN(first, 1, now) {
		t.Fatal("want exactly the burst of 1")
	}
	// Another source of the same shard evicts it.
	for i := 2; i < 1000; i++ {
		k := keyOf(netip.AddrFrom4([4]byte{127, 0, byte(i >> 8), byte(i)}))
		if k.shard() == first.shard() {
			b.allowN(k, 1, now)
			break
		}
	}
	if !b.allowN(first, 1, now) {
		t.Fatal("an evicted source did not start afresh")
	}
	if n := b.len(); n > 16 {
		t.Fatalf("%d sources remembered, want at most 16", n)
	}
}

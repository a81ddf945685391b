//go:build linux

package xdp

import "testing"

// TestProvenBuckets: the proven table holds a quarter of tracked_ips
// buckets of 4 sources, a power of two from 1,024 to 1<<20.
func TestProvenBuckets(t *testing.T) {
	for _, c := range []struct {
		tracked int
		want    uint32
	}{{16, 1024}, {4096, 1024}, {65536, 16384}, {65537, 32768}, {1 << 24, 1 << 20}} {
		if got := provenBuckets(c.tracked); got != c.want {
			t.Errorf("provenBuckets(%d) = %d, want %d", c.tracked, got, c.want)
		}
	}
}

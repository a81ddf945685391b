package xdp

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math/bits"
)

// provenBuckets is the proven table's size in buckets (bpf/maps.h's
// proven, PROVEN_WAYS sources each) for tracked sources: a power of two,
// at least 1,024 and a quarter of tracked rounded up, at most 1<<20.
func provenBuckets(tracked int) uint32 {
	n := max((tracked+3)/4, 1024)
	return uint32(min(1<<bits.Len(uint(n-1)), 1<<20))
}

// newProvenSeed is a server's key of the proven table's hash: random, so
// that no one can aim sources at a proven source's bucket, and a server new
// at a removed one's index finds none of its marks.
func newProvenSeed() (uint64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("proven table seed: %w", err)
	}
	return binary.LittleEndian.Uint64(b[:]) | 1, nil
}

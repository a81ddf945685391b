// Command memlat measures this machine's load latency by working-set size:
// a pointer chase through a random cycle of 64-byte lines (each load
// depends on the one before, so neither the prefetcher nor out-of-order
// execution hides it). It says what a cache line costs when it is no
// longer in the caches: the figure behind the per-server state's cost in
// bench/README.md ("Host mode").
//
//	go run ./bench/memlat                 # 32 KiB to 128 MiB, four times larger each step
//	go run ./bench/memlat -loads 5000000  # fewer loads per size
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"
)

const line = 64 // bytes; one slot of the cycle per line

func main() {
	loads := flag.Int("loads", 20_000_000, "timed loads per size (1e5 to 1e9)")
	flag.Parse()
	if *loads < 100_000 || *loads > 1_000_000_000 {
		fmt.Fprintln(os.Stderr, "memlat: -loads must be 1e5 to 1e9")
		os.Exit(2)
	}
	fmt.Printf("%10s %12s\n", "working set", "ns per load")
	for size := 32 << 10; size <= 128<<20; size *= 4 {
		fmt.Printf("%7d KiB %12.1f\n", size>>10, chase(size, *loads))
	}
}

// chase returns the mean ns of a load through a random cycle over size
// bytes, after one warm pass over the whole cycle.
func chase(size, loads int) float64 {
	n := size / line
	const stride = line / 8 // uint64s per line
	next := make([]uint64, n*stride)
	order := rand.Perm(n)
	for i, at := range order {
		next[at*stride] = uint64(order[(i+1)%n] * stride)
	}
	p := uint64(order[0] * stride)
	for range n {
		p = next[p]
	}
	start := time.Now()
	for range loads {
		p = next[p]
	}
	took := time.Since(start)
	sink = p
	return float64(took.Nanoseconds()) / float64(loads)
}

// sink keeps the chase's last value alive, so the loop is not removed.
var sink uint64

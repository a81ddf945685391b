package main

import (
	"math"
	"testing"
	"time"
)

func TestHistQuantiles(t *testing.T) {
	var h hist
	for i := 1; i <= 1000; i++ {
		h.record(int64(i) * int64(time.Microsecond))
	}
	for _, c := range []struct {
		q    float64
		want float64
	}{{0.5, 500e3}, {0.99, 990e3}, {0, 1e3}, {1, 1000e3}} {
		got := float64(h.quantile(c.q))
		if got < c.want*0.97 || got > c.want*1.03 {
			t.Errorf("q%.2f = %.0f ns, want %.0f ±3%%", c.q, got, c.want)
		}
	}
	var empty hist
	if empty.quantile(0.5) != 0 {
		t.Error("empty histogram")
	}
}

func TestHistIndexMonotonic(t *testing.T) {
	prev := -1
	for v := uint64(0); v < 1<<20; v += 7 {
		i := histIndex(v)
		if i < prev {
			t.Fatalf("index of %d is %d, below %d", v, i, prev)
		}
		lo := histValue(i)
		if v >= 64 && (lo > v+v/32 || lo+lo/32 < v) {
			t.Fatalf("value %d in bucket %d of value %d", v, i, lo)
		}
		prev = i
	}
	if i := histIndex(math.MaxUint64); i >= histBuckets {
		t.Fatalf("index %d out of range", i)
	}
}

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and parentheses; utime 250, stime 50 ticks.
	line := "1234 (queryd (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 100 1000 200\n"
	d, err := parseProcStat([]byte(line))
	if err != nil || d != 3*time.Second {
		t.Fatalf("got %v, %v; want 3s", d, err)
	}
	if _, err := parseProcStat([]byte("1234 (x) S 1")); err == nil {
		t.Fatal("short stat accepted")
	}
	if _, err := procCPU(osPid()); err != nil {
		t.Fatal(err)
	}
}

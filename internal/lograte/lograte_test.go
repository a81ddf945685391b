package lograte

import (
	"testing"
	"time"
)

// A burst of lines is cut at the bucket: the refused ones are counted and
// reported with the next line allowed, once.
func TestLimiterSuppresses(t *testing.T) {
	l := New(10, 5)
	allowed := 0
	for i := 0; i < 100; i++ {
		if ok, n := l.Allow(); ok {
			allowed++
			if n != 0 {
				t.Fatalf("line %d allowed with %d suppressed before any was refused", i, n)
			}
		}
	}
	if allowed < 5 || allowed > 6 { // the burst, and maybe one token refilled meanwhile
		t.Fatalf("%d of 100 lines at once allowed, want the burst of 5", allowed)
	}
	var got int64
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ok, n := l.Allow()
		if ok {
			got = n
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no line allowed within 2 s at 10 a second")
		}
	}
	if got < int64(100-allowed) {
		t.Errorf("the next line reports %d suppressed, want at least %d", got, 100-allowed)
	}
	if ok, n := l.Allow(); ok && n != 0 {
		t.Errorf("the suppressed count was reported twice (%d)", n)
	}
}

// Allow does not allocate.
func TestLimiterAllocs(t *testing.T) {
	l := New(1, 1)
	if n := testing.AllocsPerRun(1000, func() { l.Allow() }); n != 0 {
		t.Errorf("Allow: %v allocations, want 0", n)
	}
}

package main

import (
	"testing"
	"time"
)

// The per-datagram work of a worker (deciding a batch, recording sends,
// reading replies, matching them, recording latency) allocates nothing.
func TestWorkerLoopAllocatesNothing(t *testing.T) {
	for _, name := range []string{"a2s_info", "a2s_player", "gs4_full", "q3_status", "sagl_info"} {
		p, _ := lookupProto(name)
		cfg := &loadConfig{inflight: 32, batch: 64, duration: time.Hour, timeout: time.Second, refresh: 20 * time.Second}
		w := newWorker(cfg, p, 0, -1)
		replies := [][]byte{
			unhex(t, "FFFFFFFF 41 0A08590B"),
			unhex(t, "09 01020004 393531333330373900"),
			unhex(t, "53414752 01 00 0000 EFBEADDE"),
			unhex(t, "FEFFFFFF 01000000 02 00 E004 AABB"),
			unhex(t, "FEFFFFFF 01000000 02 01 E004 AABB"),
			unhex(t, "53414752 01 01 0000 11111111 00100000 0200 0300 7D"),
		}
		now := int64(1)
		allocs := testing.AllocsPerRun(200, func() {
			now += 1000
			k := w.nextBatch(now)
			w.sent(now, k, k)
			for _, r := range replies {
				w.onReply(r, now+500)
			}
			w.expire(now)
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per round", name, allocs)
		}
		if w.st.answered == 0 {
			t.Errorf("%s: nothing answered", name)
		}
	}
}

// BenchmarkWorkerReply is the generator's user-space work per answer: read
// and match one reply, record its latency, queue the next request.
func BenchmarkWorkerReply(b *testing.B) {
	p, _ := lookupProto("a2s_info")
	cfg := &loadConfig{inflight: 32, batch: 64, duration: time.Hour, timeout: time.Second, refresh: 20 * time.Second}
	w := newWorker(cfg, p, 0, -1)
	w.onReply([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0x41, 1, 2, 3, 4}, 0) // no request in flight: stray
	w.setToken(0x04030201, 0, true)
	reply := make([]byte, 79)
	now := int64(1)
	k := w.nextBatch(now)
	w.sent(now, k, k)
	b.ReportAllocs()
	for b.Loop() {
		now += 100
		w.onReply(reply, now)
		k := w.nextBatch(now)
		w.sent(now, k, k)
	}
}

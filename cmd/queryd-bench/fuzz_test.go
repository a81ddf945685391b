package main

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// FuzzReply feeds arbitrary reply datagrams to every protocol's reader and
// to a worker: nothing may panic, and a worker's count of requests in
// flight stays within its bounds.
func FuzzReply(f *testing.F) {
	for _, s := range []string{
		"FFFFFFFF 41 0A08590B", "FEFFFFFF 01000000 02 01 E004 AABB", "FEFFFFFF 01000000 00 05",
		"09 01020304 393531333330373900", "09 01020304 00", "53414752 01 00 0000 EFBEADDE",
		"53414752 01 01 0000 11111111 00100000 0200 0300 7D", "514442460200", "", "FF",
	} {
		b, _ := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
		f.Add(b)
	}
	cfg := &loadConfig{inflight: 4, batch: 4, duration: time.Hour, timeout: time.Second, refresh: 20 * time.Second}
	f.Fuzz(func(t *testing.T, d []byte) {
		for _, p := range protos {
			classify(p, d, session)
			w := newWorker(cfg, p, 1, -1)
			k := w.nextBatch(10)
			w.sent(10, k, k)
			w.onReply(d, 20)
			w.onReply(d, 30)
			if w.n < 0 || w.n > cfg.inflight || w.asking < 0 {
				t.Fatalf("%s: %d in flight, %d asking", p.name, w.n, w.asking)
			}
		}
	})
}

package responder_test

import (
	"testing"
	"time"

	"github.com/queryd/queryd/responder"
)

// The batch and uring layers' receive loops are shared by every server of the
// process (host mode): many servers answer side by side, and closing some of
// them (SIGHUP removing servers) stops those only, promptly, while the others
// go on answering from their own addresses.
func TestSharedLoopsCloseSomeServers(t *testing.T) {
	for _, layer := range []responder.SocketLayer{responder.SocketBatch, responder.SocketUring} {
		t.Run(string(layer), func(t *testing.T) { testSharedLoopsClose(t, layer) })
	}
}

func testSharedLoopsClose(t *testing.T, layer responder.SocketLayer) {
	const n = 12
	fs := make([]*fixture, n)
	for i := range fs {
		fs[i] = newFixtureOn(t, layer, "127.0.0.1:0", responder.Limits{})
	}
	c := clientConn(t, "127.0.0.1:0")
	ask := func(f *fixture) bool {
		for try := 0; try < 3; try++ {
			if reply, src := exchange(t, c, f.addr, infoReq, 2*time.Second); reply != nil {
				if src != f.addr {
					t.Fatalf("reply from %s, want %s", src, f.addr)
				}
				return true
			}
		}
		return false
	}
	for i, f := range fs {
		if !ask(f) {
			t.Fatalf("server %d (%s) did not answer", i, f.addr)
		}
	}
	for i := 0; i < n; i += 2 {
		start := time.Now()
		fs[i].srv.Close()
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("closing server %d took %v", i, d)
		}
		for j := i + 1; j < n; j++ {
			if !ask(fs[j]) {
				t.Fatalf("after closing server %d, server %d did not answer", i, j)
			}
		}
	}
	for i := 0; i < n; i += 2 {
		if reply, _ := exchange(t, c, fs[i].addr, infoReq, 200*time.Millisecond); reply != nil {
			t.Fatalf("closed server %d answered", i)
		}
	}
}

package responder_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/queryd/queryd/responder"
)

// The receive loops count every datagram of a real socket in the busiest
// sources while DrainSources runs beside them (the race detector watches
// the hand-over); the drains add up to what was sent.
func TestBusiestSourcesOverSockets(t *testing.T) {
	for _, layer := range layers {
		t.Run(string(layer), func(t *testing.T) { testBusiestOverSockets(t, layer) })
	}
}

func testBusiestOverSockets(t *testing.T, layer responder.SocketLayer) {
	f := newFixtureOn(t, layer, "127.0.0.1:0", responder.Limits{})
	c := clientConn(t, "127.0.0.7:0")
	const sent = 300
	stop := make(chan struct{})
	done := make(chan []responder.SourceCount)
	go func() { // drains as the status page's sampler does, but often
		var all []responder.SourceCount
		for {
			select {
			case <-stop:
				done <- f.srv.DrainSources(all)
				return
			case <-time.After(time.Millisecond):
				all = f.srv.DrainSources(all)
			}
		}
	}()
	answered := 0
	buf := make([]byte, 64)
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; i < sent && time.Now().Before(deadline); i++ {
		if _, err := c.WriteToUDPAddrPort(infoReq, f.addr); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		if n, _, err := c.ReadFromUDPAddrPort(buf); err == nil && n == 9 {
			answered++
		}
	}
	close(stop)
	all := <-done
	if answered != sent {
		t.Fatalf("%d of %d challenges came back", answered, sent)
	}
	var n, challenged uint64
	src := netip.MustParsePrefix("127.0.0.7/32")
	for _, sc := range all {
		if sc.Source != src {
			t.Errorf("a source %s that sent nothing", sc.Source)
			continue
		}
		n += sc.Requests
		challenged += sc.Outcomes[1]
	}
	if n != sent || challenged != sent {
		t.Fatalf("drained %d requests (%d challenged) from %s, want %d", n, challenged, src, sent)
	}
	if responder.SourceOutcomes[1] != "challenged" {
		t.Fatalf("SourceOutcomes[1] = %q", responder.SourceOutcomes[1])
	}
}

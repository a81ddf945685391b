package responder_test

import (
	"bytes"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/internal/testkit"
	"github.com/queryd/queryd/responder"
)

// panicky claims datagrams starting with 'Q': it panics on "Q!" and answers
// "ok" to the others.
type panicky struct{}

var _ responder.Handler = panicky{}

func (panicky) Name() string         { return "panicky" }
func (panicky) Claims(p []byte) bool { return len(p) > 0 && p[0] == 'Q' }
func (panicky) Answer(req []byte, _ netip.AddrPort, _ []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	if bytes.Equal(req, []byte("Q!")) {
		var m map[string]int
		m["boom"]++ // a nil map: the kind of bug a handler could have
	}
	return append(out, []byte("ok")), dgram.AnsweredOpen
}

// panickyForwarder panics on every datagram no handler claims.
type panickyForwarder struct{}

var _ responder.Forwarder = panickyForwarder{}

func (panickyForwarder) Forward([]byte, netip.AddrPort, netip.Addr, responder.Sender) bool {
	panic("forwarder bug")
}

// TestPanicRecovered: a handler (or the Forwarder) that panics on some
// datagrams costs those datagrams only: the responder keeps answering the
// others, counts each panic as outcome "panic" of its protocol, and logs
// the panic with its stack at most once a second.
func TestPanicRecovered(t *testing.T) {
	for _, layer := range layers {
		t.Run(string(layer), func(t *testing.T) { testPanicRecovered(t, layer) })
	}
}

func testPanicRecovered(t *testing.T, layer responder.SocketLayer) {
	var logs testkit.Buffer
	reg := prometheus.NewRegistry()
	srv, err := responder.New(responder.Config{
		Listen:   []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")},
		Socket:   layer,
		Workers:  1, // one receive loop: it must survive, and it serves in order
		Forward:  panickyForwarder{},
		Logger:   slog.New(slog.NewTextHandler(&logs, nil)),
		Registry: reg,
	}, panicky{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Close() })
	f := &fixture{srv: srv, reg: reg, addr: srv.Addrs()[0]}
	c := clientConn(t, "127.0.0.1:0")
	start := time.Now()
	const rounds = 20
	for i := 0; i < rounds; i++ {
		// The panicking datagrams go first; one socket pair keeps its
		// order on loopback, so a reply to them would be read first.
		if _, err := c.WriteToUDPAddrPort([]byte("Q!"), f.addr); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WriteToUDPAddrPort([]byte("Z"), f.addr); err != nil {
			t.Fatal(err)
		}
		if r, _ := exchange(t, c, f.addr, []byte("Qx"), 2*time.Second); string(r) != "ok" {
			t.Fatalf("round %d: got %q, want ok: the responder stopped answering after a panic", i, r)
		}
	}
	elapsed := time.Since(start)
	// The one loop flushes a batch's counts before sending its replies: the
	// last "ok" read means every datagram before it is counted.
	for _, w := range []struct {
		protocol, outcome string
		n                 float64
	}{{"panicky", "panic", rounds}, {"unknown", "panic", rounds}, {"panicky", "answered", rounds}} {
		if got := f.count(t, w.protocol, w.outcome); got != w.n {
			t.Errorf("queryd_requests_total{protocol=%q,outcome=%q} = %v, want %v", w.protocol, w.outcome, got, w.n)
		}
	}
	out := logs.String()
	logged := strings.Count(out, "panic while serving a datagram")
	if most := 1 + int(elapsed/time.Second); logged < 1 || logged > most {
		t.Errorf("%d panics logged for %d in %v, want 1 to %d (at most one a second)", logged, 2*rounds, elapsed, most)
	}
	for _, want := range []string{"stack=", "protocol=", "request_hex="} {
		if !strings.Contains(out, want) {
			t.Errorf("the panic log has no %s:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "panicky.Answer") && !strings.Contains(out, "panickyForwarder.Forward") {
		t.Errorf("the logged stack does not show the panicking function:\n%s", out)
	}
}

package responder_test

import (
	"io"
	"log/slog"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queryd/queryd/responder"
)

// recordingForwarder keeps a copy of every datagram forwarded.
type recordingForwarder struct {
	mu  sync.Mutex
	got [][]byte
}

func (r *recordingForwarder) Forward(req []byte, _ netip.AddrPort, _ netip.Addr, _ responder.Sender) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, append([]byte(nil), req...))
	return true
}

func (r *recordingForwarder) datagrams() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.got...)
}

// Closing the server forwards nothing: the batch layer's wake-up (shutdown
// of the sockets) made recvmmsg return an empty message with the last
// client's address, which went to the relay as a 0-byte datagram of that
// client (and, without relay mode, counted as unknown).
func TestCloseForwardsNoPhantom(t *testing.T) {
	for _, layer := range layers {
		t.Run(string(layer), func(t *testing.T) {
			fw := &recordingForwarder{}
			s, err := responder.New(responder.Config{
				Listen: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, Socket: layer, Workers: 1,
				Forward: fw, Registry: prometheus.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Listen(); err != nil {
				t.Fatal(err)
			}
			s.Start()
			c := clientConn(t, "127.0.0.1:0")
			c.WriteToUDPAddrPort([]byte("game"), s.Addrs()[0])
			for deadline := time.Now().Add(3 * time.Second); len(fw.datagrams()) < 1; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the datagram was not forwarded within 3 s")
				}
			}
			s.Close()
			if got := fw.datagrams(); len(got) != 1 {
				t.Errorf("forwarded %q; want only the client's datagram", got)
			}
		})
	}
}

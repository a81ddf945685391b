package responder_test

import (
	"errors"
	"io"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
	"github.com/queryd/queryd/steer"
)

// newSteerServer runs the real A2S handler on 127.0.0.1 with steer as
// the layer's SocketConfig.Steer and onProven as OnProven.
func newSteerServer(t *testing.T, layer responder.SocketLayer, fn responder.SteerFunc, onProven func(netip.Addr)) netip.AddrPort {
	t.Helper()
	is, err := challenge.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := a2s.NewHandler(a2s.Config{AppID: 480, InfoChallenge: true, GamePort: 27015}, is, nil)
	st, err := state.NewStore(map[string]any{"name": "loopback", "map": "m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Subscribe(h.Update)
	srv, err := responder.New(responder.Config{
		Listen:   []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")},
		Socket:   layer,
		Workers:  2,
		Steer:    fn,
		OnProven: onProven,
		Registry: prometheus.NewRegistry(),
	}, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Close() })
	return srv.Addrs()[0]
}

// TestSteerProvenSockets: with package steer's program, a client that
// answered its challenge has its next queries put on the proven sockets
// (the program's counts), and they are answered there; an unproven
// source's stay on the ordinary ones.
func TestSteerProvenSockets(t *testing.T) {
	if testing.Short() {
		t.Skip("steer: loads a BPF program: -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("steer: loading an SK_REUSEPORT program needs root (CAP_BPF)")
	}
	for _, layer := range []responder.SocketLayer{responder.SocketBatch, responder.SocketUring} {
		t.Run(string(layer), func(t *testing.T) { testSteerProvenSockets(t, layer) })
	}
}

func testSteerProvenSockets(t *testing.T, layer responder.SocketLayer) {
	st, err := steer.New(64, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // after the server's Close (cleanups run last first)
	var (
		mu     sync.Mutex
		groups []*steer.Group
	)
	fn := func(proven, ordinary []int) (io.Closer, error) {
		g, err := st.Attach(proven, ordinary)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		groups = append(groups, g)
		mu.Unlock()
		return g, nil
	}
	addr := newSteerServer(t, layer, fn, st.Prove)
	if len(groups) != 1 {
		t.Fatalf("%d groups steered, want 1", len(groups))
	}

	c := clientConn(t, "127.0.0.2:0")
	ch, _ := exchange(t, c, addr, infoReq, 2*time.Second)
	if len(ch) != 9 {
		t.Fatalf("challenge: %q", ch)
	}
	query := append(append([]byte{}, infoReq...), ch[5:9]...)
	for i := 0; i < 6; i++ { // the first proves the client: ordinary; then 5 on the proven sockets
		r, _ := exchange(t, c, addr, query, 2*time.Second)
		if in, err := a2s.ParseInfo(r); err != nil || in.Name != "loopback" {
			t.Fatalf("query %d: %+v %v", i, in, err)
		}
	}
	other := clientConn(t, "127.0.0.3:0")
	for i := 0; i < 3; i++ {
		if r, _ := exchange(t, other, addr, infoReq, 2*time.Second); len(r) != 9 {
			t.Fatalf("unproven challenge %d: %q", i, r)
		}
	}
	got, err := groups[0].Counts()
	if err != nil {
		t.Fatal(err)
	}
	if got.Proven != 5 || got.Ordinary != 5 {
		t.Errorf("program counts %+v; want 5 proven (the proven client's queries after its first answer), 5 ordinary", got)
	}
}

// TestSteerRefused: when steering fails (a kernel or privileges that refuse
// it), the proven sources' sockets are closed again and the address serves
// on its ordinary ones. The Steer it is given: 2 sockets of each kind, all
// bound to the address's port.
func TestSteerRefused(t *testing.T) {
	var gotProven, gotOrdinary []netip.AddrPort
	fn := func(proven, ordinary []int) (io.Closer, error) {
		for _, fd := range proven {
			gotProven = append(gotProven, sockName(t, fd))
		}
		for _, fd := range ordinary {
			gotOrdinary = append(gotOrdinary, sockName(t, fd))
		}
		return nil, errors.New("refused by the test")
	}
	addr := newSteerServer(t, responder.SocketBatch, fn, nil)
	if len(gotProven) != 2 || len(gotOrdinary) != 2 {
		t.Fatalf("Steer got %d proven and %d ordinary sockets, want 2 and 2", len(gotProven), len(gotOrdinary))
	}
	for _, ap := range append(gotProven, gotOrdinary...) {
		if ap != addr {
			t.Errorf("a socket handed to Steer is bound to %s, the address is %s", ap, addr)
		}
	}
	for i := 0; i < 8; i++ { // 8 source ports: both ordinary sockets, none lost to a closed one
		c := clientConn(t, "127.0.0.1:0")
		if r, _ := exchange(t, c, addr, infoReq, 2*time.Second); len(r) != 9 {
			t.Fatalf("challenge %d after a refused Steer: %q", i, r)
		}
	}
}

func sockName(t *testing.T, fd int) netip.AddrPort {
	t.Helper()
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	a := sa.(*unix.SockaddrInet4)
	return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
}

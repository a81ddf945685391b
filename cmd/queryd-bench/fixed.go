package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/responder"
)

// fixedHandler claims every datagram and answers it with the same
// pre-encoded datagrams: on responder.Sockets (queryd's socket layer without
// the Server's budgets, metrics and stale check) it measures the socket layer
// alone.
type fixedHandler struct{ reply [][]byte }

var _ responder.Handler = (*fixedHandler)(nil)

// Fixed replies: "QDBF", the number of datagrams of the answer still to
// come after this one, then 'x' up to the size. The load generator counts an
// answer at the datagram with 0 to come, whatever protocol it speaks.
const (
	fixedMagic  = "QDBF"
	fixedHeader = len(fixedMagic) + 1
)

// newFixedReply makes an answer of parts datagrams of size bytes each.
func newFixedReply(size, parts int) [][]byte {
	out := make([][]byte, parts)
	for i := range out {
		b := make([]byte, size)
		copy(b, fixedMagic)
		b[len(fixedMagic)] = byte(parts - 1 - i)
		for j := fixedHeader; j < size; j++ {
			b[j] = 'x'
		}
		out[i] = b
	}
	return out
}

// newFixedHandler makes a handler answering parts datagrams of size bytes.
func newFixedHandler(size, parts int) *fixedHandler {
	return &fixedHandler{reply: newFixedReply(size, parts)}
}

// Name is the handler's label.
func (h *fixedHandler) Name() string { return "fixed" }

// Claims claims every datagram.
func (h *fixedHandler) Claims([]byte) bool { return true }

// Answer appends the fixed reply.
func (h *fixedHandler) Answer(_ []byte, _ netip.AddrPort, _ []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	return append(out, h.reply...), dgram.Answered
}

// serverFlags are the flags the fixed and naive servers share.
type serverFlags struct {
	listen  string
	size    int
	parts   int
	workers int
	rcvbuf  int
}

func (f *serverFlags) register(fs *flag.FlagSet, workers int, workersDoc string) {
	fs.StringVar(&f.listen, "listen", "127.0.0.1:27016", "UDP address to answer on (loopback only; port 0 picks one)")
	fs.IntVar(&f.size, "size", 120, "reply datagram size in bytes (5 to 16384)")
	fs.IntVar(&f.parts, "parts", 1, "datagrams per answer (1 to 32), like a split A2S or a SAGL reply")
	fs.IntVar(&f.workers, "workers", workers, workersDoc)
	fs.IntVar(&f.rcvbuf, "rcvbuf", 4<<20, "SO_RCVBUF in bytes (queryd's default is 4 MiB)")
}

func (f *serverFlags) check() (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(f.listen)
	if err != nil {
		return ap, fmt.Errorf("-listen %q: want IP:PORT: %w", f.listen, err)
	}
	if a := ap.Addr().Unmap(); !loopback127.Contains(a) && a != netip.IPv6Loopback() {
		return ap, fmt.Errorf("-listen %s: refused: the benchmark servers answer on loopback only", f.listen)
	}
	if f.size < fixedHeader || f.size > 16384 {
		return ap, fmt.Errorf("-size %d: want %d to 16384", f.size, fixedHeader)
	}
	if f.parts < 1 || f.parts > 32 {
		return ap, fmt.Errorf("-parts %d: want 1 to 32", f.parts)
	}
	if f.workers < 0 || f.workers > 256 {
		return ap, fmt.Errorf("-workers %d: want 0 (one per CPU) to 256", f.workers)
	}
	return ap, nil
}

// cmdFixed runs the fixed-reply server on queryd's socket layer.
func cmdFixed(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("queryd-bench fixed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f serverFlags
	f.register(fs, 0, "sockets (batch) or goroutines (portable); 0: one per CPU")
	var socket responder.SocketLayer
	fs.TextVar(&socket, "socket", responder.SocketAuto, "socket layer: batch, uring or portable (default: responder's default)")
	gso := fs.Bool("gso", true, "send a multi-datagram answer as one UDP GSO send (batch layer, when the kernel has it), as queryd does")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ap, err := f.check()
	if err != nil {
		fmt.Fprintln(stderr, "queryd-bench fixed:", err)
		return 2
	}
	srv, err := responder.NewSockets(responder.SocketConfig{
		Listen:     []netip.AddrPort{ap},
		Socket:     socket,
		Workers:    f.workers,
		RecvBuffer: f.rcvbuf,
		DisableGSO: !*gso,
		Logger:     slog.New(slog.NewTextHandler(stderr, nil)),
	}, newFixedHandler(f.size, f.parts))
	if err == nil {
		err = srv.Listen()
	}
	if err != nil {
		fmt.Fprintln(stderr, "queryd-bench fixed:", err)
		return 1
	}
	srv.Start()
	fmt.Fprintf(stdout, "listening %s\n", srv.Addrs()[0])
	waitSignal()
	srv.Close()
	return 0
}

// Command xdpecho attaches the benchmark's bare XDP_TX echo (xdp.Echo:
// every IPv4 or IPv6 UDP datagram to port 27015 sent back, addresses swapped) to
// one interface until SIGTERM or SIGINT: bench/xdp.sh's baseline arms, run
// inside the benchmark's network namespace. With -per-source, the echo
// also adds one to the source's slot of a table of 65,536 cache lines
// (the echo-state arm).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/queryd/queryd/xdp"
)

func main() {
	perSource := flag.Bool("per-source", false, "touch one cache line of per-source state per frame")
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: xdpecho [-per-source] IFACE") }
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	e, err := xdp.AttachEcho(flag.Arg(0), *perSource)
	if err != nil {
		fmt.Fprintln(os.Stderr, "xdpecho:", err)
		os.Exit(1)
	}
	fmt.Println("XDP echo attached")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	if err := e.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "xdpecho:", err)
		os.Exit(1)
	}
}

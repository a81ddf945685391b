// Command xdpecho attaches the benchmark's bare XDP_TX echo (xdp.Echo:
// every IPv4 UDP datagram to port 27015 sent back, addresses swapped) to
// one interface until SIGTERM or SIGINT: bench/xdp.sh's baseline arm, run
// inside the benchmark's network namespace.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/queryd/queryd/xdp"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: xdpecho IFACE")
		os.Exit(2)
	}
	e, err := xdp.AttachEcho(os.Args[1])
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

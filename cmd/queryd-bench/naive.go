package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
)

// cmdNaive runs the naive baseline: one net.UDPConn read by a plain
// ReadFromUDPAddrPort / WriteToUDPAddrPort loop (-workers loops), a fixed
// reply.
func cmdNaive(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("queryd-bench naive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f serverFlags
	f.register(fs, 1, "goroutines reading the one socket; 0: one per CPU (1, the default, measured faster on 2 cores)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ap, err := f.check()
	if err != nil {
		fmt.Fprintln(stderr, "queryd-bench naive:", err)
		return 2
	}
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap))
	if err != nil {
		fmt.Fprintln(stderr, "queryd-bench naive:", err)
		return 1
	}
	if err := conn.SetReadBuffer(f.rcvbuf); err != nil {
		fmt.Fprintln(stderr, "queryd-bench naive: SO_RCVBUF:", err)
	}
	n := f.workers
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			naiveLoop(conn, newFixedReply(f.size, f.parts))
		}()
	}
	fmt.Fprintf(stdout, "listening %s\n", conn.LocalAddr())
	waitSignal()
	conn.Close()
	wg.Wait()
	return 0
}

// naiveLoop answers every datagram with reply until conn is closed.
func naiveLoop(conn *net.UDPConn, reply [][]byte) {
	buf := make([]byte, 2048)
	for {
		_, src, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		for _, d := range reply {
			conn.WriteToUDPAddrPort(d, src)
		}
	}
}

package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage:
  queryd-bench load  [-target IP:PORT] [-proto NAME] [-sources N] [-inflight N] [-duration D] [-count N] [-pid PID]
  queryd-bench fixed [-listen IP:PORT] [-size N]   fixed-reply server on queryd's socket layer
  queryd-bench naive [-listen IP:PORT] [-size N]   naive net.UDPConn fixed-reply server
  queryd-bench flood -iface IF -dst-mac MAC [-mode token|spoof] [-duration D] [-pid PID]
                     raw A2S_INFO frames (AF_PACKET sendmmsg) from inside bench/xdp.sh's namespace
Run a subcommand with -h for its flags. Addresses must be on loopback (flood: in 198.18.0.0/15,
inside a network namespace).
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "load":
		return cmdLoad(args[1:], stdout, stderr)
	case "fixed":
		return cmdFixed(args[1:], stdout, stderr)
	case "naive":
		return cmdNaive(args[1:], stdout, stderr)
	case "flood":
		return cmdFlood(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "queryd-bench: unknown subcommand %q\n%s", args[0], usage)
	return 2
}

// waitSignal blocks until SIGINT or SIGTERM.
func waitSignal() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
	signal.Stop(sigs)
}

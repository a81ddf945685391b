// Command hostcheck is bench/hosts.sh's client for host mode (one queryd
// running many servers): it asks, feeds and watches N servers at once on
// 127.0.0.1, server i (from 0) on port BASE+i, named NAME-%03d (A2S_INFO's
// name, GameSpy4's hostname), fed through DIR/s%03d.sock.
//
//	hostcheck wait  -base PORT -n N [-first 0] [-name bench] [-timeout 10s]
//	    until every server answers A2S_INFO and GameSpy4 with its own name;
//	    prints "RESULT all_answering_s=S".
//	hostcheck feed  -dir DIR -n N [-name bench]
//	    one replace message on each server's socket, naming it "NAME-%03d fed".
//	hostcheck watch -base PORT -n N [-skip K] [-duration 5s] [-interval 20ms]
//	    one A2S_INFO client per server (K excluded) asking in a loop for
//	    -duration; prints "RESULT servers=… queries=… answered=… lost=…".
//
// Loopback only, bounded: N at most 1024, every run at most 5 minutes.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

// limits of every subcommand.
const (
	maxServers = 1024
	maxRun     = 5 * time.Minute
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: hostcheck wait|feed|watch [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("hostcheck "+os.Args[1], flag.ExitOnError)
	base := fs.Int("base", 41000, "UDP port of server 0 on 127.0.0.1")
	n := fs.Int("n", 200, "servers")
	first := fs.Int("first", 0, "wait: the first server to ask (servers FIRST ... FIRST+N-1)")
	name := fs.String("name", "bench", "server name prefix (NAME-%03d)")
	dir := fs.String("dir", "", "feed: the folder of the sockets s%03d.sock")
	timeout := fs.Duration("timeout", 10*time.Second, "wait: give up after this long")
	skip := fs.Int("skip", -1, "watch: leave server K out")
	duration := fs.Duration("duration", 5*time.Second, "watch: how long")
	interval := fs.Duration("interval", 20*time.Millisecond, "watch: pause between one client's queries")
	fs.Parse(os.Args[2:])
	if *n < 1 || *first < 0 || *first+*n > maxServers || *base < 1 || *base+*first+*n-1 > 65535 {
		fmt.Fprintf(os.Stderr, "hostcheck: -n %d -base %d: want 1 to %d servers on ports up to 65535\n", *n, *base, maxServers)
		os.Exit(2)
	}
	if *timeout > maxRun || *duration > maxRun {
		fmt.Fprintf(os.Stderr, "hostcheck: -timeout and -duration at most %s\n", maxRun)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "wait":
		err = wait(*base, *first, *n, *name, *timeout)
	case "feed":
		err = feedAll(*dir, *n, *name)
	case "watch":
		err = watch(*base, *n, *skip, *duration, *interval)
	default:
		err = fmt.Errorf("unknown subcommand %q (wait, feed, watch)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostcheck:", err)
		os.Exit(1)
	}
}

// addr is server i's address.
func addr(base, i int) string { return fmt.Sprintf("127.0.0.1:%d", base+i) }

// serverName is server i's name.
func serverName(prefix string, i int) string { return fmt.Sprintf("%s-%03d", prefix, i) }

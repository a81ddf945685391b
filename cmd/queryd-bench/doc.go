// Command queryd-bench measures queryd's UDP path on loopback: a load
// generator speaking every protocol queryd answers (with the challenge
// round), a fixed-reply server on queryd's own socket layer, and a naive
// net.UDPConn baseline. bench/run.sh runs them against each other and
// bench/README.md has the figures.
//
// Usage:
//
//	queryd-bench load  -target 127.0.0.1:27015 -proto a2s_info [-ports 1 -sources 16 -inflight 32 -duration 10s -pid PID]
//	queryd-bench fixed -listen 127.0.0.1:27016 [-size 120]
//	queryd-bench naive -listen 127.0.0.1:27017 [-size 120]
//	queryd-bench flood -iface qdbc -dst-mac MAC -mode token|spoof (bench/xdp.sh)
//
// Run a subcommand with -h for all its flags.
//
// load sends one kind of query (-proto; -h lists them) from -sources
// sockets, -inflight requests each, for -duration (or -count requests),
// asking for a challenge token first where the protocol has one and again
// before it expires. It prints the rate of answers, the latency
// percentiles, the CPU per reply of the generator and, with -pid, of the
// server, then one RESULT line of key=value pairs for scripts. fixed and
// naive answer every datagram with -size bytes until SIGINT or SIGTERM:
// the ceilings queryd's own figures are compared with. flood sends raw
// A2S_INFO frames through an AF_PACKET socket (Linux) for the XDP benchmark.
//
// Every address must be on loopback: the generator floods. flood sends raw
// frames only inside a network namespace, to and from 198.18.0.0/15. Exit
// status: 0; 1 when the run fails; 2 on a usage error.
package main

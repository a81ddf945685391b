// Package responder owns queryd's UDP sockets: it reads datagrams,
// demultiplexes them by their first bytes to the protocol handlers, applies
// the per-IP, host-wide and global byte budgets, counts every outcome, and
// sends the replies from the local address each query arrived on. It knows
// no protocol itself: the daemon hands it the handlers
// (Server.SetHandlers), built from the modules protocols.List gives, and
// again after each reload.
//
// # Three socket layers
//
// [listen] socket picks how the UDP sockets are read and answered
// (SocketLayer). Every layer hands its datagrams to the same pipeline
// (route, deny, silence, the proven-source tier, packet rate, the
// handler's Answer, budgets, count), so the layers differ only in how bytes cross the kernel: the
// behaviour tests run on all three (server_test.go's layers).
//
// SocketBatch, the default on Linux, exists for throughput: per-core
// SO_REUSEPORT sockets read outside the Go netpoller by one locked thread
// each, recvmmsg and sendmmsg a batch at a time, a multi-datagram answer as
// one UDP GSO send, the reply sent from the address the query came to
// (IP_PKTINFO). One receive loop costs no goroutine wake-up per datagram
// and no allocation.
//
// SocketUring exists for many servers on one host: a load spread over
// them gives each socket a few datagrams per round, so the batch layer's
// two system calls per socket multiply (1.66x one server's machine CPU per
// answer over 50 servers at 150,000/s, against 1.19-1.24x on uring:
// bench/README.md). It reads the batch layer's sockets through one
// io_uring per CPU, one io_uring_enter a round for every socket. It needs
// Linux 6.1 and a system call filter that allows io_uring, which container
// runtimes' default seccomp profiles do not; where it is refused it runs
// the batch layer's loops and logs so. That is why it is opt-in.
//
// SocketPortable exists so that queryd builds and runs where the other
// two cannot: one net.UDPConn per address read by Workers goroutines
// through the netpoller, on any OS (a developer's macOS or Windows, the
// BSDs). It is the slowest and the simplest, the reference the other two
// must match.
//
// # Proven sources first
//
// A source is proven once the server answered a valid challenge token from
// it, for Limits.ProvenFor (gate.go). The requests that do not answer a
// valid token draw on the unproven packet gate (Limits.UnprovenPacketRate,
// a share per receive loop, split with the XDP program like the byte
// budgets); while a loop's share is spent, a request from a source that is
// not proven and that carries no valid token (dgram.TokenChecker) is shed
// before the packet rate and the handler's Answer: no token hashed, no
// reply built, counted "unproven_shed". Proven sources keep their
// challenges and answers. Config.OnProven is told of each answer to a
// valid token (for the socket-steering program below).
//
// # Proven sources' sockets
//
// Under a flood the kernel drops datagrams at a full socket receive queue
// before queryd reads them, whoever sent them: a client that has proven its
// address (queryd answered its valid challenge token) waits in, or is
// dropped from, the same queues as the flood. With SocketConfig.Steer set
// (the daemon's [listen] steer_proven, package steer) the batch and uring
// layers open, per address, as many sockets again in the same reuseport
// group for proven sources; an SK_REUSEPORT program puts a proven source's
// datagrams on them and the rest on the ordinary ones, so a flood fills
// only the ordinary queues. The batch layer's loops read the proven
// sockets first in every round (the uring loops read them in turn). The
// responder learns who is proven through Config.OnProven. It needs
// CAP_BPF; without it an address has its ordinary sockets only (package
// steer says what works unprivileged and why not more).
//
// When one may go: portable stays while queryd builds for anything but
// Linux (it is the only layer there). Batch may go once uring is the
// default, that is once the kernels and container runtimes queryd is
// deployed on allow io_uring (Debian 12's 6.1 does; Docker's, Podman's and
// Kubernetes' default seccomp profiles refuse it today): uring falls back
// to batch's loops, so batch's loops stay while that fallback is needed,
// even if "batch" stops being a choice. Uring may go if it stops paying:
// if bench/hosts.sh and bench/xdp.sh show it no cheaper than batch per
// answer over many servers, or the XDP path answers most of that load.
package responder

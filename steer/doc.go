// Package steer gives the sources queryd has proven sockets of their own on
// the socket path, so that a flood filling the other sockets' receive queues
// never delays them.
//
// A proven source is one queryd answered a valid challenge token from (the
// responder's OnProven). Under a flood of spoofed or unproven datagrams the
// kernel drops at a full socket receive queue before queryd reads a byte:
// without steering a proven client's query waits in, or is dropped from, the
// same queues as the flood. With steering each listen address has two sets
// of SO_REUSEPORT sockets in one group: the ordinary ones and the proven
// ones. An SK_REUSEPORT program (bpf/steer.c, attached to the group with
// SO_ATTACH_REUSEPORT_EBPF) looks every datagram's source up in an LRU hash
// of proven sources (an IPv4 address or an IPv6 /64, as the budgets key
// them) and, while its entry has not expired, puts it on a proven socket;
// everything else goes to an ordinary one, each by the kernel's 4-tuple
// hash. The responder reads the proven sockets first.
//
// The program costs 470–580 ns a datagram from a proven source and 200–350
// ns from another (its own time by kernel.bpf_stats_enabled, TestSteerCost,
// the shared 2-vCPU VM), against the microseconds queryd spends reading and
// answering one; an unproven source writes nothing (only a source queryd
// answered a token from enters the map, from userland).
//
// # Privileges
//
// Loading an SK_REUSEPORT program and its REUSEPORT_SOCKARRAY maps needs
// CAP_BPF (Linux 5.8+; before, CAP_SYS_ADMIN) or root. CAP_NET_ADMIN is not
// needed: on Linux 6.18 a process with CAP_BPF alone loads, attaches and
// steers (TestSteerProven passes so), one with CAP_NET_ADMIN alone is
// refused. New fails without it and queryd runs unsteered, saying so once
// in its log. Nothing unprivileged can steer by proven address:
//
//   - SO_ATTACH_REUSEPORT_CBPF is allowed to any user, but classic BPF has
//     no maps: it can read the source address (SKF_NET_OFF) and the
//     payload, never a set of addresses that changes at run time. All it
//     could steer on is what a datagram claims, for instance "carries a
//     challenge token", which a flood can claim as cheaply (the token is
//     only checked in queryd). It would put the flood on the "proven"
//     sockets too, so queryd does not attach one.
//   - An unprivileged eBPF program of this type is refused (sk_reuseport is
//     not among the types kernel.unprivileged_bpf_disabled=0 allows, and
//     distributions set it to 2).
//   - A connected UDP socket per proven client (connect(2) to its address
//     and port, bound to the same port) wins the kernel's lookup over the
//     group without any privilege, but it matches the source port too:
//     most query clients (qstat, gamedig, server browsers' per-query
//     sockets) send from a new port each time, and it costs one file
//     descriptor per client. queryd does not do it.
//
// Non-Linux builds have no steering: New reports it unavailable.
package steer

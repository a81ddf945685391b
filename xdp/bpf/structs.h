// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// The maps' values (shared with package xdp through bpf2go -type) and the
// program's own working structs.
#pragma once

#include <linux/bpf.h>

#include "consts.h"
#include "net.h"

struct reply {
	__u32 len;   // 0: not served here (pass to the socket path)
	__u32 csum;  // ones' complement sum of data as big-endian 16-bit words, folded
	enum reply_flags flags;
	__u32 pad;
	__u8 data[MAX_REPLY];
};

// One server's config (config_map, by server index); the host's fields
// (key, clocks, MTU, routes) are the same in every server's.
struct config {
	__u64 k0, k1;      // the challenge issuer's SipHash key
	__u64 wall_offset; // CLOCK_REALTIME - CLOCK_MONOTONIC in ns (two's complement)
	__u64 fresh_until; // monotonic ns after which queryd is silent (daemon/silence.go's deadline); ~0: never
	__u64 epoch, epoch_next; // the token epoch at the last sync, and the monotonic ns the next one starts
	__u64 perip_ns, perip_burst, perip_tau; // ns per byte << 16 (rounded up: 1e9 << 16 / bytes/s), bytes, ns (burst/rate)
	__u64 unp_ns, unp_burst, unp_tau;       // one CPU's share of the unproven budget
	__u64 host_ns, host_burst, host_tau;    // the program's share of the host-wide per-IP budget (hostip), every server's the same (host_ns 0: none)
	__u64 rate_cost[MAX_PROTOS], rate_tau[MAX_PROTOS]; // each protocol's per-source packet rate (by row): ns per request (0: none), burst ns
	__u64 gate_cost, gate_tau; // one CPU's share of the unproven packet gate: ns per request (0: no gate), burst ns
	__u64 proven_ns;           // how long an answer to a valid token keeps its source proven (0: never remembered)
	__u64 proven_seed;         // the proven table's hash key (random, the server's)
	__u64 proven_mask;         // its buckets - 1 (a power of two - 1)
	__u32 mtu;
	__u32 enabled; // 0: pass everything
	__u32 deny;    // this server's entries in the deny trie (0: skip the lookup)
	__u32 routes;  // 1: the routes trie mirrors the main table (0: it does not; pass where it is needed)
	__u32 route_gen; // the interfaces' addresses, routes and forwarding as of now (never 0): a peer's cached route is good while it is this
	__u32 pad;
};

// One source's state at one server (perip): its byte budget, the
// route back the program found for it, so that a source that asks again
// skips the route check while nothing changed (IPv4 sources only: an IPv6
// source's key is its /64, and the check is per address), and its
// requests by outcome for the status page, in two halves: the drain
// period drain_map's gen counts into half gen & 1, while package xdp reads
// the other (one hash lookup per frame for the budget and the count).
struct peer {
	__u64 tat;       // the byte budget's theoretical arrival time
	__u32 route_gen; // the config's route_gen when the route back was found good through route_oif (0: never)
	__u32 route_oif;
	__u64 tok;           // epoch << 32 | the source's token of that epoch (IPv4 sources; 0: none yet)
	__u32 count_gen[2];  // the drain period each half of n counts (0: none yet)
	__u32 n[2][NOUT];    // requests by outcome in the periods count_gen
};

// One bucket of the proven table (proven, budget.h's proven_of): up to
// PROVEN_WAYS proven sources, each way a fingerprint of the source's hash
// (high 32 bits, never 0) and until when it is proven (low 32 bits:
// monotonic ns >> PROVEN_SHIFT; 0: a free way). One cache line at most.
struct proven_bucket {
	__u64 way[PROVEN_WAYS];
};

// The drain period (drain_map's one entry): package xdp bumps gen when it
// reads the sources, and the program sets dirty when it counts into a
// peer (package xdp clears it: nothing to read in perip while it is 0).
struct drain {
	__u32 gen;   // never 0
	__u32 dirty;
};

// One server's counters on one CPU; the protocols' rows are their places
// in bpf/protocols.h.
struct stats {
	__u64 req[MAX_PROTOS][NOUT];
	__u64 in[MAX_PROTOS];
	__u64 out[MAX_PROTOS];
	__u64 passed[NPASS]; // datagrams to a listen address left to the socket path, by reason
	__u64 resize_failed; // replies not sent: the driver could not resize the frame (passed)
};

struct ipkey {
	__u8 b[16];
};

// A source of one server: the budgets' and the sources map's key.
struct srckey {
	struct ipkey ip;
	__u32 server;
};

// A source of one server for one protocol: the packet rates' key.
struct ratekey {
	struct srckey src;
	__u32 proto; // the protocol's row
};

// A destination the program answers for (dests): a local address of an
// attached interface and a port, which package xdp expands from the
// servers' listen addresses (a wildcard listen: every address of its
// family on the interface) and the interfaces' addresses from netlink.
struct destkey {
	__u32 ifindex;
	__u16 port; // network order
	__u16 pad;
	__u8 addr[16]; // IPv4 as ::ffff:a.b.c.d
};

// What the program needs of a destination: its server, and the ingress
// interface's MAC and flags (so that one lookup is the listen check, the
// local address check and the interface's).
struct dest {
	__u8 mac[ETH_ALEN];
	__u16 pad;
	enum server_limit server; // the server's index, below MAX_SERVERS
	enum iface_flags iflags;
};

// A local address of an interface (local_addrs); IPv4 as ::ffff:a.b.c.d.
struct addrkey {
	__u32 ifindex;
	__u8 addr[16];
};

// A prefix of the routes trie; IPv4 as ::ffff:a.b.c.d/96+n.
struct denykey {
	__u32 prefixlen;
	__u8 addr[16];
};

// A prefix of one server's deny list: the server's index (big-endian, so
// that it is the prefix's first 32 bits), then the address as in denykey.
struct srvdenykey {
	__u32 prefixlen; // 32 + 96 + n for IPv4, 32 + n for IPv6
	__u32 server;    // big-endian
	__u8 addr[16];
};

// One source's requests the program answered or dropped since the last
// drain (sources), by outcome.
struct source_count {
	__u64 n[NOUT];
};

// A slot of the seen table (one array per CPU): the requests of one source
// answered without per-source state (a reply no larger than the request)
// in drain period gen.
struct seen {
	struct srckey key;
	__u32 gen; // the drain period of n (0: never used)
	__u32 n[NOUT];
};

// The source as the tokens and the budgets see it.
struct src {
	__u64 m0, m1;     // the source address as challenge.Issuer hashes it
	struct srckey key; // the source as the budgets see it (IPv4, or IPv6 /64), and the server
};

// What the reply needs from the request, read before the frame changes.
struct req {
	__u8 mac_src[ETH_ALEN], mac_dst[ETH_ALEN];
	__u32 saddr4, daddr4;
	struct in6_addr saddr6, daddr6;
	__u16 sport, dport; // network order
	__u8 echo[8];       // copied into the reply at payload offset 1: GameSpy4's session, SQP's token, Bedrock's time
	__u32 plen;         // request payload bytes
	__u32 ifindex;      // the ingress interface, where the reply leaves
	__u32 server;       // the destination's server
};

// small is a reply made in the program (a challenge); at most 16 bytes.
struct small {
	__u32 len;
	__u8 b[16];
};

// A query being handled: what every protocol's handler reads.
struct query {
	struct xdp_md *ctx;
	const struct config *c;
	__u8 *p;   // the UDP payload
	void *end; // the frame's end
	__u64 now; // bpf_ktime_get_coarse_ns (CLOCK_MONOTONIC at the last tick)
	int silent; // past fresh_until: drop what would be answered (counted as stale)
	int stateless;     // answered with a reply no larger than the request: no budget entry looked up or made
	struct peer *peer; // the source's budget entry (perip) once looked up (peer_of); 0 before, or for a source without one
	__u32 proto;       // the protocol's row (bpf/protocols.h), set by the demux
	__u32 slot0;       // its first reply slot: its handler's slot i is slot0 + i
	struct req r;
	struct src s;
};

// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Divert ([listen] divert): queries to a stock game server's address and
// port, which queryd does not bind, taken in the driver. This header holds
// divert's tables and the rewrites; queryd.c's entry runs the flow (the
// divert hook before the parse path). Nothing here calls into queryd.c.
#pragma once

#include "csum.h"
#include "maps.h"
#include "parsing.h"

#define MAX_DIVERT 64          // divert addresses (all servers)
#define MAX_DIVERT_SERVERS 256 // config.MaxServers: the counters' rows

// A divert address: IPv4 as ::ffff:a.b.c.d, the port in host order.
struct divert_key {
	__u8 addr[16];
	__u16 port;
	__u16 pad;
};

// What the program does for it.
struct divert_val {
	__u16 hidden; // the port queryd binds on the same address (host order)
	__u8 server;  // the server's index (its counters' row)
	__u8 protos;  // the protocols whose queries are taken (1 << row, bpf/protocols.h; MAX_PROTOS <= 8)
};

// The divert counters' columns (queryd_xdp_diverted_total{result}).
enum divert_result {
	DIVERT_XDP,     // a claimed query the program answered (or challenged)
	DIVERT_SOCKET,  // a claimed query handed to queryd's socket on the hidden port
	DIVERT_DROPPED, // a claimed query dropped: stale, over a budget, denied
	DIVERT_PASSED,  // not claimed (game traffic) or not for this host: to the game server
	NDIVERT,
};

struct divert_count {
	__u64 n[NDIVERT];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_DIVERT);
	__type(key, struct divert_key);
	__type(value, struct divert_val);
} divert_map SEC(".maps");

// divert_on is 1 while divert_map has entries: without divert the hook
// costs one array read (inlined by the verifier), not a hash lookup.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} divert_on SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_DIVERT_SERVERS);
	__type(key, __u32);
	__type(value, struct divert_count);
} divert_stats SEC(".maps");

// divert_enabled reports whether divert_map has entries (one array read,
// inlined by the verifier).
static __always_inline int divert_enabled(void)
{
	__u32 zero = 0;
	__u32 *on = bpf_map_lookup_elem(&divert_on, &zero);
	return on && *on;
}

// divert_key_of makes *k the divert key of a destination address (IPv4 as
// ::ffff:a.b.c.d, daddr4 in network order) and port (network order).
static __always_inline void divert_key_of(struct divert_key *k, const int v6, const struct in6_addr *daddr6,
					  __be32 daddr4, __be16 port)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->port = bpf_ntohs(port);
	if (v6) {
		__builtin_memcpy(k->addr, daddr6, 16);
	} else {
		k->addr[10] = k->addr[11] = 0xFF;
		__builtin_memcpy(&k->addr[12], &daddr4, 4);
	}
}

// divert_lookup is the divert entry of the key k, or 0.
static __always_inline struct divert_val *divert_lookup(const struct divert_key *k)
{
	return bpf_map_lookup_elem(&divert_map, k);
}

// divert_counted counts a datagram of server i (a function of its own:
// enum divert_result stays in the BTF for bpf2go -type).
static __noinline void divert_counted(__u32 server, enum divert_result res)
{
	struct divert_count *c = bpf_map_lookup_elem(&divert_stats, &server);
	if (c && res < NDIVERT)
		c->n[res]++;
}

// fix16 is a UDP checksum after one 16-bit word of the datagram changed
// from old to new (RFC 1624); a checksum of 0 (none, over IPv4) stays 0.
static __always_inline __u16 fix16(__u16 check, __u16 old, __u16 new)
{
	if (check == 0)
		return 0;
	__u32 s = (__u16)~bpf_ntohs(check) + (__u32)(__u16)~bpf_ntohs(old) + bpf_ntohs(new);
	__u16 c = ~fold(s) & 0xffff;
	return bpf_htons(c ? c : 0xffff);
}

// divert_to_hidden rewrites a claimed query's destination port to the
// hidden one, fixing the checksum.
static __always_inline void divert_to_hidden(struct udphdr *udp, __be16 hidden)
{
	udp->check = fix16(udp->check, udp->dest, hidden);
	udp->dest = hidden;
}

// divert_reply puts the game port back as the source port of the reply
// handle made (XDP_TX), fixing the checksum.
static __always_inline int divert_reply(struct xdp_md *ctx, __u16 game)
{
	struct cursor cur = {.pos = (void *)(long)ctx->data, .end = (void *)(long)ctx->data_end};
	struct ethhdr *eth = parse_ethhdr(&cur);
	if (!eth)
		return XDP_ABORTED;
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		if (!parse_ipv6hdr(&cur))
			return XDP_ABORTED;
	} else if (!parse_iphdr(&cur)) {
		return XDP_ABORTED;
	}
	struct udphdr *udp = parse_udphdr(&cur);
	if (!udp)
		return XDP_ABORTED;
	udp->check = fix16(udp->check, udp->source, game);
	udp->source = game;
	return XDP_TX;
}

// divert_scratch holds, between divert_in and the end of the same run of
// the program on this CPU, the claimed query's server and game port (0:
// none): kept out of the registers across handle, so that the verifier
// checks handle once for diverted and other frames alike.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} divert_scratch SEC(".maps");

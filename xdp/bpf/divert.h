// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Divert ([listen] divert): queries to a stock game server's address and
// port, which queryd does not bind, taken in the driver. divert_entry runs
// before the parse path (queryd.c's handle) on every IP frame:
//
//   - not to a divert address: handle, as without divert;
//   - to one, but failing the kernel's checks (strict.h: not for this
//     host, a martian source, a VLAN tag) or not a query queryd's
//     protocols claim (game traffic, Quake 3 getchallenge / connect, A2S
//     0x71): passed untouched, to the game server;
//   - a claimed query: its destination port is rewritten to the port
//     queryd binds on the same address (the hidden port, one of the listen
//     table's), the UDP checksum fixed, and handle runs on it: the program
//     answers it (XDP_TX; the reply's source port is put back to the game
//     port), drops it (stale, a budget, deny) or passes it to queryd's
//     socket on the hidden port (several datagrams, a challenge argument);
//     divert_tc.c puts the socket's replies' source port back on egress.
//
// A claimed query thus never reaches the game server, and nothing else is
// touched. The counts are per server (the entry's index, the server's in
// the per-destination tables: in host mode each server's divert addresses
// carry its own). The kernel's checks use the hidden port's destination
// (dests), which the server's listen addresses put there.
#pragma once

#include "bedrock.h"
#include "parsing.h"
#include "quake3.h"
#include "sagl.h"
#include "sqp.h"
#include "strict.h"

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
	__u8 protos;  // the protocols that claim (1 << enum proto)
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

// handle_dev and handle_any are the parse path (queryd.c) of each program.
static __noinline int handle_dev(struct xdp_md *ctx, struct cursor *cur, struct ethhdr *eth, const int v6);
static __noinline int handle_any(struct xdp_md *ctx, struct cursor *cur, struct ethhdr *eth, const int v6);

// divert_count counts a datagram of server i (a function of its own: enum
// divert_result stays in the BTF for bpf2go -type).
static __noinline void divert_counted(__u32 server, enum divert_result res)
{
	struct divert_count *c = bpf_map_lookup_elem(&divert_stats, &server);
	if (c && res < NDIVERT)
		c->n[res]++;
}

// a2s_pad reports whether the payload after the type byte is NUL padding
// only (A2S GETCHALLENGE and A2A_PING; at most 64 bytes: longer is not
// taken for one).
static __always_inline int a2s_pad(const struct query *q)
{
	if (q->r.plen > 64)
		return 0;
	for (__u32 i = 5; i < 64 && i < q->r.plen; i++) { // a bounded loop, not unrolled
		const __u8 *b = q->p + i;
		if ((void *)(b + 1) > q->end || *b != 0)
			return 0;
	}
	return 1;
}

// fold_eq compares n bytes of p with the lower-case word w, ignoring case
// (quake3.h's lower_eq, without the early exit the unroller refuses here).
static __always_inline int fold_eq(const __u8 *p, const char *w, const int n)
{
	int same = 1;
#pragma unroll
	for (int i = 0; i < 9; i++) {
		if (i < n) {
			__u8 ch = p[i];
			if (ch >= 'A' && ch <= 'Z')
				ch |= 0x20;
			same &= ch == (__u8)w[i];
		}
	}
	return same;
}

// divert_claims is the protocols' Claims (a2s/request.go, quake3, …) for
// the protocols on in mask: whether queryd takes the datagram as a query.
static __always_inline int divert_claims(const struct query *q, __u8 mask)
{
	const __u8 *p = q->p;
	if ((mask & (1 << PROTO_SQP)) && is_sqp(q))
		return 1;
	if ((mask & (1 << PROTO_SAGL)) && is_sagl(q))
		return 1;
	if ((mask & (1 << PROTO_GS4)) && has(q, 2) && p[0] == 0xFE && p[1] == 0xFD)
		return 1;
	if ((mask & (1 << PROTO_BEDROCK)) && q->r.plen == BEDROCK_PING_LEN && has(q, BEDROCK_PING_LEN)) {
		int same = 1;
#pragma unroll
		for (int i = 0; i < 16; i++)
			same &= p[9 + i] == raknet_magic[i];
		if (same)
			return 1;
	}
	if (!has(q, 5) || p[0] != 0xFF || p[1] != 0xFF || p[2] != 0xFF || p[3] != 0xFF)
		return 0;
	if (mask & (1 << PROTO_A2S)) {
		__u8 t = p[4];
		if (t == 'T' || t == 'U' || t == 'V')
			return 1;
		if ((t == 'W' || t == 'i') && a2s_pad(q))
			return 1;
		if (t == 'A' && q->r.plen == 9)
			return 1;
	}
	if (!(mask & (1 << PROTO_Q3)) || !has(q, 11))
		return 0;
	if (fold_eq(p + 4, "getinfo", 7))
		return 1;
	return has(q, 13) && fold_eq(p + 4, "getstatus", 9);
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

// divert_in decides for a frame (Ethernet header at data): -1 when it is
// not to a divert address; DIVERT_PASS when it passes untouched; else the
// query was claimed and rewritten to the hidden port, and the value is
// server << 32 | game port (network order).
#define DIVERT_NONE (-1)
#define DIVERT_PASS (-2)
static __always_inline __s64 divert_in(struct xdp_md *ctx, const int v6, const int devbound)
{
	__u32 zero = 0;
	__u32 *on = bpf_map_lookup_elem(&divert_on, &zero);
	if (!on || !*on)
		return DIVERT_NONE;
	struct cursor cur = {.pos = (void *)(long)ctx->data, .end = (void *)(long)ctx->data_end};
	struct ethhdr *eth = parse_ethhdr(&cur);
	if (!eth)
		return DIVERT_NONE;
	struct query q = {.ctx = ctx, .end = cur.end};
	struct divert_key k = {};
	struct iphdr *ip = 0;
	struct ipv6hdr *ip6 = 0;
	if (v6) {
		if (!(ip6 = parse_ipv6hdr(&cur)) || ip6->nexthdr != IPPROTO_UDP)
			return DIVERT_NONE;
		q.r.saddr6 = ip6->saddr;
		q.r.daddr6 = ip6->daddr;
		__builtin_memcpy(k.addr, &ip6->daddr, 16);
	} else {
		if (!(ip = parse_iphdr(&cur)) || ip->version != 4 || ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
		    (ip->frag_off & bpf_htons(0x3FFF)))
			return DIVERT_NONE;
		q.r.saddr4 = ip->saddr;
		q.r.daddr4 = ip->daddr;
		k.addr[10] = k.addr[11] = 0xFF;
		__builtin_memcpy(&k.addr[12], &ip->daddr, 4);
	}
	struct udphdr *udp = parse_udphdr(&cur);
	if (!udp)
		return DIVERT_NONE;
	k.port = bpf_ntohs(udp->dest);
	struct divert_val *dv = bpf_map_lookup_elem(&divert_map, &k);
	if (!dv)
		return DIVERT_NONE;
	__u32 server = dv->server;
	__u32 ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(struct udphdr) || (void *)udp + ulen > cur.end ||
	    (v6 ? malformed6(ip6, udp, ulen) : malformed4(ip, ulen)))
		goto untouched;
	__builtin_memcpy(q.r.mac_src, eth->h_source, ETH_ALEN);
	__builtin_memcpy(q.r.mac_dst, eth->h_dest, ETH_ALEN);
	q.r.ifindex = ctx->ingress_ifindex;
	q.r.dport = bpf_htons(dv->hidden);
	// the hidden port's destination (dests: the server's bound address on
	// this interface) gives the checks the interface's MAC and flags
	const struct dest *d = destination(v6, &q.r);
	if (!d || strict(ctx, v6, &q.r, d, devbound) >= 0)
		goto untouched;
	q.r.plen = ulen - sizeof(struct udphdr);
	q.p = cur.pos;
	if (!divert_claims(&q, dv->protos))
		goto untouched;
	__u16 game = udp->dest, hidden = bpf_htons(dv->hidden);
	udp->check = fix16(udp->check, game, hidden);
	udp->dest = hidden;
	return ((__s64)server << 32) | game;
untouched:
	divert_counted(server, DIVERT_PASSED);
	return DIVERT_PASS;
}

// divert_in_dev and divert_in_any are divert_in as a function of its own
// for each program (its stack apart from handle's; devbound a constant).
static __noinline __s64 divert_in_dev(struct xdp_md *ctx, const int v6)
{
	return divert_in(ctx, v6, 1);
}

static __noinline __s64 divert_in_any(struct xdp_md *ctx, const int v6)
{
	return divert_in(ctx, v6, 0);
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

// divert_entry is the hook before the parse path: see the top of this file.
// handle runs as a function of its own (handle_dev, handle_any).
static __always_inline int divert_entry(struct xdp_md *ctx, struct cursor *cur, struct ethhdr *eth, const int v6,
					const int devbound)
{
	__u32 zero = 0;
	__u64 *scratch = bpf_map_lookup_elem(&divert_scratch, &zero);
	if (!scratch)
		return XDP_PASS;
	__s64 d = devbound ? divert_in_dev(ctx, v6) : divert_in_any(ctx, v6);
	if (d == DIVERT_PASS)
		return XDP_PASS;
	if (d != DIVERT_NONE) { // the frame changed: parse it again
		*scratch = (1ULL << 63) | (__u64)d;
		cur->pos = (void *)(long)ctx->data;
		cur->end = (void *)(long)ctx->data_end;
		if (!(eth = parse_ethhdr(cur))) {
			*scratch = 0;
			return XDP_PASS;
		}
	}
	int act = devbound ? handle_dev(ctx, cur, eth, v6) : handle_any(ctx, cur, eth, v6);
	scratch = bpf_map_lookup_elem(&divert_scratch, &zero);
	if (!scratch || !*scratch)
		return act;
	__u64 sd = *scratch;
	*scratch = 0;
	if (act == XDP_TX)
		act = divert_reply(ctx, (__u16)sd);
	divert_counted((sd >> 32) & 0xFF, act == XDP_TX ? DIVERT_XDP : act == XDP_PASS ? DIVERT_SOCKET : DIVERT_DROPPED);
	return act;
}

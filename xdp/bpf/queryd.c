// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// queryd's XDP fast path: answers the hot single-datagram queries (A2S,
// GameSpy4, Quake 3, SQP, Bedrock, SAGL) in the driver with the bytes the
// socket path would send, and passes everything else to the socket path
// untouched. The Go side (package xdp) fills the maps: the config
// (challenge key, clocks, budgets, listen addresses), the pre-encoded
// replies, and reads the counters.
//
// This file is the parse path: Ethernet, IP, UDP, the destination's
// server (one program answers for every server of a host), then
// one handler per protocol (a2s.h, gamespy4.h, quake3.h, sqp.h, bedrock.h,
// sagl.h). The headers hold one concern each: consts.h and structs.h
// (shared with Go through bpf2go -type), maps.h, counters.h, parsing.h (a
// cursor helper per header), csum.h, token.h (SipHash), budget.h (GCRA),
// reply.h (XDP_TX), challenge.h (a challenge from a module's template).
//
// Build: go generate ./xdp (bpf2go, Debian's clang 14, the vendored headers
// in include/); the object and the Go bindings are committed, so building
// queryd needs no clang.

#include "a2s.h"
#include "bedrock.h"
#include "divert.h"
#include "gamespy4.h"
#include "parsing.h"
#include "quake3.h"
#include "sagl.h"
#include "sqp.h"
#include "strict.h"

char __license[] SEC("license") = "Dual MIT/GPL";

// parse_ip6 reads an IPv6 header whose next header is UDP into q.
static __always_inline struct ipv6hdr *parse_ip6(struct cursor *cur, struct query *q)
{
	struct ipv6hdr *ip6 = parse_ipv6hdr(cur);
	if (!ip6 || ip6->nexthdr != IPPROTO_UDP)
		return 0;
	q->r.saddr6 = ip6->saddr;
	q->r.daddr6 = ip6->daddr;
	struct src *s = &q->s;
	__builtin_memcpy(&s->m0, &ip6->saddr.in6_u.u6_addr8[0], 8);
	__builtin_memcpy(&s->m1, &ip6->saddr.in6_u.u6_addr8[8], 8);
	__builtin_memcpy(s->key.ip.b, &ip6->saddr, 16);
	// an IPv4-mapped source is its IPv4 address; others count by /64
	if (!(s->m0 == 0 && (__u32)s->m1 == 0xFFFF0000))
		__builtin_memset(&s->key.ip.b[8], 0, 8);
	return ip6;
}

// parse_ip4 reads an IPv4 header without options, not a fragment, whose
// protocol is UDP into q.
static __always_inline struct iphdr *parse_ip4(struct cursor *cur, struct query *q)
{
	struct iphdr *ip = parse_iphdr(cur);
	if (!ip || ip->version != 4 || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return 0;
	if (ip->frag_off & bpf_htons(0x3FFF)) // a fragment: the socket path reassembles
		return 0;
	q->r.saddr4 = ip->saddr;
	q->r.daddr4 = ip->daddr;
	struct src *s = &q->s;
	s->m0 = 0;
	s->m1 = 0xFFFF0000ULL | ((__u64)ip->saddr << 32);
	s->key.ip.b[10] = 0xFF;
	s->key.ip.b[11] = 0xFF;
	__builtin_memcpy(&s->key.ip.b[12], &ip->saddr, 4);
	return ip;
}

// demux is the protocol of a payload of at least 5 bytes, or -1, by its
// first bytes as the socket path's demux reads them (SQP and Bedrock by
// their exact shapes).
static __always_inline int demux(const struct query *q)
{
	if (is_sqp(q)) // exactly 5 or 8 bytes
		return PROTO_SQP;
	if (!has(q, 7))
		return -1;
	const __u8 *p = q->p;
	if (p[0] == 0xFE && p[1] == 0xFD)
		return PROTO_GS4;
	if (p[0] == 0xFF && p[1] == 0xFF && p[2] == 0xFF && p[3] == 0xFF) {
		if (p[4] == 'T' || p[4] == 'U' || p[4] == 'V')
			return PROTO_A2S;
		if (p[4] == 'g' || p[4] == 'G')
			return PROTO_Q3;
		return -1;
	}
	if (is_sagl(q))
		return PROTO_SAGL;
	if (is_bedrock(q))
		return PROTO_BEDROCK;
	return -1;
}

// handle parses the headers, finds the destination's server (dests),
// makes the kernel's checks (strict.h) and hands the payload to its
// protocol with that server's config, replies and budgets. Datagrams to a
// port no server listens on pass uncounted; the others that it does not
// answer pass counted by reason at their server, or are dropped (stale,
// over a budget, denied).
static __always_inline int handle(struct xdp_md *ctx, struct cursor *cur, struct ethhdr *eth, const int v6,
				  const int devbound)
{
	struct query q = {.ctx = ctx, .end = cur->end};
	struct iphdr *ip = 0;
	struct ipv6hdr *ip6 = 0;
	if (v6 ? !(ip6 = parse_ip6(cur, &q)) : !(ip = parse_ip4(cur, &q)))
		return XDP_PASS;
	struct udphdr *udp = parse_udphdr(cur);
	if (!udp)
		return XDP_PASS;
	q.r.sport = udp->source;
	q.r.dport = udp->dest;
	__u32 ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(struct udphdr) || (void *)udp + ulen > cur->end)
		return XDP_PASS;
	q.r.plen = ulen - sizeof(struct udphdr);
	__u32 port = bpf_ntohs(udp->dest);
	__u32 *owner = bpf_map_lookup_elem(&ports, &port);
	if (!owner || !*owner)
		return XDP_PASS; // no server listens on the port: not counted
	q.r.ifindex = ctx->ingress_ifindex;
	const struct dest *d = destination(v6, &q.r);
	if (!d)
		return pass_to(*owner - 1, PASS_NOT_LOCAL);
	__u32 server = d->server;
	q.r.server = server;
	q.s.key.server = server;
	q.c = bpf_map_lookup_elem(&config_map, &server);
	if (!q.c || !q.c->enabled)
		return XDP_PASS;
	if (v6 ? malformed6(ip6, udp, ulen) : malformed4(ip, ulen))
		return pass_for(&q, PASS_MALFORMED);
	__builtin_memcpy(q.r.mac_src, eth->h_source, ETH_ALEN);
	__builtin_memcpy(q.r.mac_dst, eth->h_dest, ETH_ALEN);
	int why = strict(ctx, v6, &q.r, d, devbound);
	if (why >= 0)
		return pass_for(&q, why);

	q.p = cur->pos;
	if (!has(&q, 5))
		return pass(&q);
	int proto = demux(&q);
	if (proto < 0)
		return pass(&q);
	if (denied(q.c, v6, &q.r)) {
		count(&q, proto, OUT_DENIED, 0);
		return XDP_DROP;
	}
	// the coarse clock (the last tick's CLOCK_MONOTONIC, no clock source
	// read): the stale deadline, the token epochs and the budgets' GCRAs
	// are all far coarser than a tick
	q.now = bpf_ktime_get_coarse_ns();
	// the source's budget entry, once for the frame: its budget, route
	// back, token and counts (0 for a source not seen yet: budget() makes it)
	q.peer = bpf_map_lookup_elem(&perip, &q.s.key);
	q.stale = q.now > q.c->fresh_until;
	switch (proto) {
	case PROTO_GS4:
		return gamespy4(&q, v6);
	case PROTO_A2S:
		return a2s(&q, v6);
	case PROTO_Q3:
		return quake3(&q, v6);
	case PROTO_SQP:
		return sqp(&q, v6);
	case PROTO_SAGL:
		return sagl(&q, v6);
	default:
		return bedrock(&q, v6);
	}
}

// handle_dev and handle_any are handle as a function of its own for each
// program (divert.h's entry calls it; inlined, its frame and divert's
// would pass the 512 bytes of stack): devbound stays a constant, so the
// program for any device has no VLAN metadata call.
static __noinline int handle_dev(struct xdp_md *ctx, struct cursor *cur, struct ethhdr *eth, const int v6)
{
	return handle(ctx, cur, eth, v6, 1);
}

static __noinline int handle_any(struct xdp_md *ctx, struct cursor *cur, struct ethhdr *eth, const int v6)
{
	return handle(ctx, cur, eth, v6, 0);
}

// entry dispatches on the ethertype: IPv4 and IPv6 (a frame with its VLAN
// tag in band has another ethertype: passed).
static __always_inline int entry(struct xdp_md *ctx, const int devbound)
{
	struct cursor cur = {.pos = (void *)(long)ctx->data, .end = (void *)(long)ctx->data_end};
	struct ethhdr *eth = parse_ethhdr(&cur);
	if (!eth)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		return divert_entry(ctx, &cur, eth, 0, devbound);
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return divert_entry(ctx, &cur, eth, 1, devbound);
	return XDP_PASS;
}

// queryd_xdp_dev is the program bound to one device (loaded once per
// interface): it reads the VLAN tag the driver took off the frame.
SEC("xdp")
int queryd_xdp_dev(struct xdp_md *ctx)
{
	return entry(ctx, 1);
}

// queryd_xdp is the program for any device (generic mode, or a kernel
// before 6.8): an interface with VLAN devices on it passes every frame.
SEC("xdp")
int queryd_xdp(struct xdp_md *ctx)
{
	return entry(ctx, 0);
}

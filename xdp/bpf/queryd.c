// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// queryd's XDP fast path: answers the hot single-datagram queries (A2S,
// GameSpy4, Quake 3, SQP, Bedrock, SAGL) in the driver with the bytes the
// socket path would send, and passes everything else to the socket path
// untouched. The Go side (package xdp) fills the maps: the config
// (challenge key, clocks, budgets, listen addresses), the pre-encoded
// replies, and reads the counters.
//
// This file is the flow, top to bottom (after katran's balancer.bpf.c):
// the entry, divert's hook (its tables and rewrites in divert.h), the parse
// path (Ethernet, IP, UDP, the destination's server: one program answers
// for every server of a host, the kernel's checks in strict.h), the demux
// and the dispatch to one handler per protocol, all built from the one
// list of protocols (protocols.h: a header each, a2s.h, gamespy4.h, ...).
// The headers hold one concern each and never call back into this file:
// consts.h and structs.h (shared with Go through bpf2go -type), maps.h,
// counters.h, parsing.h (a cursor helper per header), csum.h, token.h
// (SipHash), budget.h (GCRA), route.h (the route back), reply.h (XDP_TX),
// challenge.h (a challenge from a module's template).
//
// Build: go generate ./xdp (bpf2go, Debian's clang 14, the vendored headers
// in include/); the object and the Go bindings are committed, so building
// queryd needs no clang.

#include "divert.h"
#include "divert_wake.h"
#include "parsing.h"
#include "strict.h"

// The protocols' code (bpf/protocols.h: their headers, whose entries
// expand to nothing here).
#define PROTOCOL(name, slots)
#include "protocols.h"
#undef PROTOCOL

// The protocols' rows: their places in the list.
enum proto {
#define PROTOCOL(name, slots) PROTO_##name,
#include "protocols.h"
#undef PROTOCOL
	NPROTO,
};
_Static_assert(NPROTO <= MAX_PROTOS, "more protocols than MAX_PROTOS (consts.h) rows");

// The reply slots: each protocol's handler's slots, one range after the
// other in the list's order.
enum slot_base {
#define PROTOCOL(name, slots) SLOT_##name, SLOT_##name##_last = SLOT_##name + (slots) - 1,
#include "protocols.h"
#undef PROTOCOL
	NSLOTS,
};
_Static_assert(NSLOTS <= MAX_SLOTS, "more reply slots than MAX_SLOTS (consts.h)");

// fast_protocols is the list as package xdp reads it from the object's
// BTF: a field per protocol in the list's order (its row), named by the
// protocol, whose type is its handler's enum NAME_slot (the slots' names)
// and whose value is its first slot. The program never reads it.
struct fast_protocols {
#define PROTOCOL(name, slots) enum name##_slot name;
#include "protocols.h"
#undef PROTOCOL
};

const volatile struct fast_protocols fast_protocols = {
#define PROTOCOL(name, slots) .name = (enum name##_slot)SLOT_##name,
#include "protocols.h"
#undef PROTOCOL
};

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

// demux is the row of the first protocol of mask (1 << row) whose claim
// takes the payload, or -1: for a listen address every protocol (a
// protocol that is off has no replies: its handler passes), for a divert
// address the ones its entry takes.
static __always_inline int demux(const struct query *q, const __u32 mask)
{
#define PROTOCOL(name, slots)                                                  \
	if ((mask & (1U << PROTO_##name)) && name##_claim(q))                  \
		return PROTO_##name;
#include "protocols.h"
#undef PROTOCOL
	return -1;
}

// dispatch hands a claimed query to its protocol's handler, with its row
// and first reply slot.
static __always_inline int dispatch(struct query *q, const int proto, const int v6)
{
	switch (proto) {
#define PROTOCOL(name, slots)                                                  \
	case PROTO_##name:                                                     \
		q->proto = PROTO_##name;                                       \
		q->slot0 = SLOT_##name;                                        \
		return name##_handle(q, v6);
#include "protocols.h"
#undef PROTOCOL
	}
	return pass(q);
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
	int proto = demux(&q, ~0U);
	if (proto < 0)
		return pass(&q);
	q.proto = proto;
	if (denied(q.c, v6, &q.r)) {
		count(&q, OUT_DENIED, 0);
		return XDP_DROP;
	}
	// the coarse clock (the last tick's CLOCK_MONOTONIC, no clock source
	// read): the silence deadline, the token epochs and the budgets' GCRAs
	// are all far coarser than a tick
	q.now = bpf_ktime_get_coarse_ns();
	// the source's budget entry (its budget, route back, token and
	// counts) is looked up only when needed (peer_of): a reply no larger
	// than its request never needs it
	q.silent = q.now > q.c->fresh_until;
	return dispatch(&q, proto, v6);
}

// handle_dev and handle_any are handle as a function of its own for each
// program (inlined, its frame and divert_in's would pass the 512 bytes of
// stack): devbound stays a constant, so the program for any device has no
// VLAN metadata call.
static __noinline int handle_dev(struct xdp_md *ctx, struct cursor *cur, struct ethhdr *eth, const int v6)
{
	return handle(ctx, cur, eth, v6, 1);
}

static __noinline int handle_any(struct xdp_md *ctx, struct cursor *cur, struct ethhdr *eth, const int v6)
{
	return handle(ctx, cur, eth, v6, 0);
}

// divert_in decides for a frame to a divert address (Ethernet header at
// data; xdp/doc.go, "Divert"): DIVERT_NONE when it is not to one (the
// parse path as without divert); DIVERT_PASS when it passes untouched, to
// the game server (the kernel's checks refuse it: not for this host, a
// martian source, a VLAN tag; or it is a query of a protocol the entry
// does not take; or no protocol claims it: game traffic, reported to
// queryd while the server rests, divert_wake.h); else the query was claimed and rewritten to the hidden port
// (the port queryd binds on the same address, one of the listen table's),
// and the value is server << 32 | game port (network order). The checks
// use the hidden port's destination (dests: the server's bound address on
// this interface).
#define DIVERT_NONE (-1)
#define DIVERT_PASS (-2)
static __always_inline __s64 divert_in(struct xdp_md *ctx, const int v6, const int devbound)
{
	if (!divert_enabled())
		return DIVERT_NONE;
	struct cursor cur = {.pos = (void *)(long)ctx->data, .end = (void *)(long)ctx->data_end};
	struct ethhdr *eth = parse_ethhdr(&cur);
	if (!eth)
		return DIVERT_NONE;
	struct query q = {.ctx = ctx, .end = cur.end};
	struct iphdr *ip = 0;
	struct ipv6hdr *ip6 = 0;
	if (v6 ? !(ip6 = parse_ip6(&cur, &q)) : !(ip = parse_ip4(&cur, &q)))
		return DIVERT_NONE;
	struct udphdr *udp = parse_udphdr(&cur);
	if (!udp)
		return DIVERT_NONE;
	struct divert_key k;
	divert_key_of(&k, v6, &q.r.daddr6, q.r.daddr4, udp->dest);
	struct divert_val *dv = divert_lookup(&k);
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
	const struct dest *d = destination(v6, &q.r);
	if (!d || strict(ctx, v6, &q.r, d, devbound) >= 0)
		goto untouched;
	q.r.plen = ulen - sizeof(struct udphdr);
	q.r.sport = udp->source;
	q.p = cur.pos;
	// the claim, once over every protocol: a query of one the entry does
	// not take passes (never a join); what none claims is game traffic,
	// a join if the server rests (divert_wake.h)
	int proto = demux(&q, ~0U);
	if (proto < 0) {
		divert_report(&k, &q.r, v6, server);
		goto untouched;
	}
	if (!(dv->protos & (1U << proto)))
		goto untouched;
	__u16 game = udp->dest;
	divert_to_hidden(udp, q.r.dport);
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

// run is the flow for an IP frame: the divert hook, the parse path, then
// for a diverted query its reply's source port put back to the game port
// (XDP_TX) and its count. The claimed query's server and game port wait
// in divert_scratch across handle, out of the registers, so that the
// verifier checks handle once for diverted and other frames alike.
static __always_inline int run(struct xdp_md *ctx, struct cursor *cur, struct ethhdr *eth, const int v6,
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

// entry dispatches on the ethertype: IPv4 and IPv6 (a frame with its VLAN
// tag in band has another ethertype: passed).
static __always_inline int entry(struct xdp_md *ctx, const int devbound)
{
	struct cursor cur = {.pos = (void *)(long)ctx->data, .end = (void *)(long)ctx->data_end};
	struct ethhdr *eth = parse_ethhdr(&cur);
	if (!eth)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		return run(ctx, &cur, eth, 0, devbound);
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return run(ctx, &cur, eth, 1, devbound);
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

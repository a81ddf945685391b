// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Turning the query's frame into its reply (XDP_TX), under the budgets.
#pragma once

#include "budget.h"
#include "counters.h"
#include "csum.h"
#include "route.h"

// has reports whether the payload holds at least n bytes (in the datagram
// and in the frame).
static __always_inline int has(const struct query *q, __u32 n)
{
	return q->r.plen >= n && q->p + n <= (__u8 *)q->end;
}

// silenced drops a query the program would answer while its server is
// silent, counted as stale; it returns 0 while the server answers.
static __always_inline int silenced(const struct query *q)
{
	if (!q->silent)
		return 0;
	count(q, OUT_STALE, 0);
	return 1;
}

// slot is the reply in the query's protocol's slot i (its handler's enum
// NAME_slot) of its server's current replies array, or 0.
static __always_inline struct reply *slot(const struct query *q, __u32 i)
{
	__u32 server = q->r.server;
	void *inner = bpf_map_lookup_elem(&replies, &server);
	if (!inner)
		return 0;
	__u32 k = q->slot0 + i;
	return bpf_map_lookup_elem(inner, &k);
}

// write_ip4 and write_ip6 write the reply's IP header (addresses swapped).
static __always_inline void write_ip4(struct iphdr *ip, const struct req *r, __u16 ulen)
{
	ip->version = 4;
	ip->ihl = 5;
	ip->tos = 0;
	ip->tot_len = bpf_htons(sizeof(struct iphdr) + ulen);
	ip->id = 0;
	ip->frag_off = bpf_htons(0x4000); // DF, as Linux sends UDP
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->check = 0;
	ip->saddr = r->daddr4;
	ip->daddr = r->saddr4;
	ip->check = ip4_check(ip);
}

static __always_inline void write_ip6(struct ipv6hdr *ip6, const struct req *r, __u16 ulen)
{
	*(__u32 *)ip6 = bpf_htonl(0x60000000); // version 6, no class, no flow label
	ip6->payload_len = bpf_htons(ulen);
	ip6->nexthdr = IPPROTO_UDP;
	ip6->hop_limit = 64;
	ip6->saddr = r->daddr6;
	ip6->daddr = r->saddr6;
}

// resize makes the frame poff + len bytes long: at the tail, or where the
// driver left no room there (a veth running the program on the sender's
// skb) at the head; the headers are all written anew after it.
static __always_inline int resize(struct xdp_md *ctx, __u32 want)
{
	int delta = (int)want - (int)(ctx->data_end - ctx->data);
	if (delta == 0 || bpf_xdp_adjust_tail(ctx, delta) == 0)
		return 0;
	if (delta < 0 || bpf_xdp_adjust_head(ctx, -delta) < 0)
		return -1;
	return 0;
}

// send turns the frame into the reply: addresses and ports swapped, the
// payload body (a slot's reply, or a small one), the first echo bytes of
// r->echo at payload offset 1 (GameSpy4's session or SQP's token: 4,
// Bedrock's time: 8; the reply's bytes there are zero), both checksums.
// It returns XDP_TX,
// or XDP_PASS when the frame could not be resized.
static __always_inline int send(const struct query *q, const int v6, const struct reply *body,
				const struct small *sm, const __u32 echo)
{
	struct xdp_md *ctx = q->ctx;
	const struct req *r = &q->r;
	const __u32 l4 = sizeof(struct ethhdr) + (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
	const __u32 poff = l4 + sizeof(struct udphdr);
	__u32 len = body ? body->len : sm->len;
	if (len == 0 || len > MAX_REPLY)
		return pass(q);
	if (resize(ctx, poff + len) < 0) {
		stat_resize_failed(q);
		return pass(q);
	}
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	if (data + poff > end)
		return XDP_ABORTED;
	struct ethhdr *eth = data;
	__builtin_memcpy(eth->h_dest, r->mac_src, ETH_ALEN);
	__builtin_memcpy(eth->h_source, r->mac_dst, ETH_ALEN);
	eth->h_proto = bpf_htons(v6 ? ETH_P_IPV6 : ETH_P_IP);
	__u16 ulen = sizeof(struct udphdr) + len;
	__u64 sum = 0;
	if (v6) {
		write_ip6(data + sizeof(struct ethhdr), r, ulen);
		sum += sum_addr6(&r->saddr6) + sum_addr6(&r->daddr6);
	} else {
		write_ip4(data + sizeof(struct ethhdr), r, ulen);
		sum += sum_addr4(r->saddr4) + sum_addr4(r->daddr4);
	}
	struct udphdr *udp = data + l4;
	udp->source = r->dport;
	udp->dest = r->sport;
	udp->len = bpf_htons(ulen);
	udp->check = 0;
	sum += IPPROTO_UDP + ulen;                               // pseudo-header
	sum += bpf_ntohs(r->dport) + bpf_ntohs(r->sport) + ulen; // UDP header
	if (body) {
		if (len == 0 || len > MAX_REPLY || bpf_xdp_store_bytes(ctx, poff, (void *)body->data, len) < 0)
			return XDP_ABORTED;
		sum += body->csum;
	} else {
		__u32 n = sm->len;
		if (n == 0 || n > sizeof(sm->b))
			return XDP_ABORTED;
		if (bpf_xdp_store_bytes(ctx, poff, (void *)sm->b, n) < 0)
			return XDP_ABORTED;
		sum += sum_small(sm);
	}
	if (echo) {
		if (echo > sizeof(r->echo) || bpf_xdp_store_bytes(ctx, poff + 1, (void *)r->echo, echo) < 0)
			return XDP_ABORTED;
		// bytes at payload offsets 1, 2, 3, …: low, high, low, … halves of words
#pragma unroll
		for (int i = 0; i < sizeof(r->echo); i++) {
			if (i < echo)
				sum += (i & 1) ? (__u64)r->echo[i] << 8 : r->echo[i];
		}
	}
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + poff > end)
		return XDP_ABORTED;
	udp = data + l4;
	__u16 c = ~fold(sum) & 0xffff;
	udp->check = bpf_htons(c ? c : 0xffff);
	return XDP_TX;
}

// answer sends a slot's reply, or a small one, and counts it in the
// query's protocol's row. A reply larger than its request (it amplifies)
// draws on the source's budgets (budget.h; the unproven one when it is
// not an answer to a token); one no larger gives a spoofed request nothing
// to reflect, and is sent with no per-source state: no budget entry looked
// up or made, counted in the seen table (count).
static __always_inline int answer(struct query *q, const int v6, enum outcome out, const struct reply *body,
				  const struct small *sm, const __u32 echo)
{
	const __u32 l3 = v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	__u32 size = body ? body->len : sm->len;
	if (body && sizeof(struct udphdr) + l3 + size > q->c->mtu)
		return pass(q); // the socket path fragments it
	int amplifies = size > q->r.plen;
	// an answer to a token follows valid(), which looked the entry up
	struct peer *p = !amplifies ? 0 : out == OUT_ANSWERED ? q->peer : peer_of(q);
	int mirrored = 0;
	if (!route_cached(q, v6, p)) {
		int why = route_back(q, v6, &mirrored);
		if (why >= 0)
			return pass_for(q, why);
	}
	int ok = 1;
	if (amplifies) {
		ok = budget(q->c, &q->s, &p, q->now, size, out != OUT_ANSWERED);
		q->peer = p;
	} else {
		q->stateless = 1; // counted in the seen table
	}
	if (mirrored && !v6 && p) { // found through the mirror: the reply goes to the request's MAC, as next time
		p->route_oif = q->r.ifindex;
		p->route_gen = q->c->route_gen;
	}
	if (!ok) {
		count(q, OUT_RATE_LIMITED, 0);
		return XDP_DROP;
	}
	int act = send(q, v6, body, sm, echo);
	if (act == XDP_TX) {
		count(q, out, size);
		if (out == OUT_ANSWERED) // an answer to a valid token proves its source
			mark_proven(q);
	}
	return act;
}

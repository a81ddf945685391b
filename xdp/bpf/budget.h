// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// The responder's budgets as GCRAs: one 64-bit theoretical arrival time per
// bucket, updated with compare-and-swap so that CPUs share it without a lock.
#pragma once

#include "counters.h"
#include "maps.h"

// gcra takes cost ns from the bucket whose theoretical arrival time is at
// *tat, if it stays within tau of now; several CPUs may share it.
static __always_inline int gcra(__u64 *tat, __u64 now, __u64 cost, __u64 tau)
{
#pragma unroll
	for (int i = 0; i < 4; i++) {
		__u64 old = *(volatile __u64 *)tat;
		__u64 base = old > now ? old : now;
		__u64 next = base + cost;
		if (next - now > tau)
			return 0;
		if (__sync_val_compare_and_swap(tat, old, next) == old)
			return 1;
	}
	return 0;
}

// cost_ns is what n tokens cost at ns_q16 (ns per token << 16, which
// package xdp rounds up from the rate), rounded up: no division per frame.
static __always_inline __u64 cost_ns(__u64 n, __u64 ns_q16)
{
	return (n * ns_q16 + 0xffff) >> 16;
}

// bucket_allow takes cost from key k's bucket in map m; a key not seen
// yet (or forgotten by the LRU) starts with a full bucket.
static __always_inline int bucket_allow(void *m, const void *k, __u64 now, __u64 cost, __u64 tau)
{
	__u64 *tat = bpf_map_lookup_elem(m, k);
	if (!tat) {
		__u64 first = now + cost;
		if (bpf_map_update_elem(m, k, &first, BPF_NOEXIST) == 0)
			return 1;
		tat = bpf_map_lookup_elem(m, k);
		if (!tat)
			return 0;
	}
	return gcra(tat, now, cost, tau);
}

// host_allow takes a reply of size bytes from the source's host-wide
// budget (hostip; responder.HostBudget), shared by every server's
// answers; without one (host_ns 0) it allows everything.
static __always_inline int host_allow(const struct config *c, const struct src *s, __u64 now, __u32 size)
{
	if (!c->host_ns)
		return 1;
	__u64 n = size < c->host_burst ? size : c->host_burst;
	return bucket_allow(&hostip, &s->key.ip, now, cost_ns(n, c->host_ns), c->host_tau);
}

// no_peer is a new source's entry in perip.
static const struct peer no_peer = {};

// budget applies the per-IP byte budget to a reply of size bytes that
// amplifies (larger than its request: reply.h's answer calls it for no
// other), then the host-wide one (host_allow), and the CPU's share of the
// unproven budget when untokened (not an answer to a valid token: responder.limiter). p is the source's entry (perip)
// when it has one; a new source gets one, with a full bucket, and *pp is
// set to it.
static __always_inline int budget(const struct config *c, const struct src *s, struct peer **pp, __u64 now,
				  __u32 size, int untokened)
{
	__u64 n = size < c->perip_burst ? size : c->perip_burst;
	__u64 cost = cost_ns(n, c->perip_ns);
	struct peer *p = *pp;
	if (!p) {
		// a new entry starts empty (a full bucket: tat 0), made from
		// read-only data: the program's stack has no room for a struct peer
		bpf_map_update_elem(&perip, &s->key, &no_peer, BPF_NOEXIST);
		p = *pp = bpf_map_lookup_elem(&perip, &s->key);
		if (!p)
			return 0;
	}
	if (!gcra(&p->tat, now, cost, c->perip_tau))
		return 0;
	if (!host_allow(c, s, now, size))
		return 0;
	if (!untokened)
		return 1;
	__u32 server = s->key.server;
	__u64 *tat = bpf_map_lookup_elem(&unproven, &server);
	if (!tat)
		return 0;
	n = size < c->unp_burst ? size : c->unp_burst;
	return gcra(tat, now, cost_ns(n, c->unp_ns), c->unp_tau);
}

// rate_allow applies the query's protocol's per-source packet rate (the
// config's row of it; 0: the protocol has none), before its reply.
static __always_inline int rate_allow(const struct query *q)
{
	const struct config *c = q->c;
	__u32 row = q->proto;
	if (row >= MAX_PROTOS || !c->rate_cost[row])
		return 1;
	struct ratekey k = {.src = q->s.key, .proto = row};
	return bucket_allow(&pktrate, &k, q->now, c->rate_cost[row], c->rate_tau[row]);
}

// proven_hash is the source's (and server's) keyed hash: the proven
// table's bucket from its low bits, the fingerprint from its high ones.
static __always_inline __u64 proven_hash(const struct query *q)
{
	__u64 a, b;
	__builtin_memcpy(&a, &q->s.key.ip.b[0], 8);
	__builtin_memcpy(&b, &q->s.key.ip.b[8], 8);
	__u64 h = (a ^ q->c->proven_seed) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ (h >> 29) ^ b ^ ((__u64)q->s.key.server << 40)) * 0xBF58476D1CE4E5B9ULL;
	h = (h ^ (h >> 32)) * 0x94D049BB133111EBULL;
	return h ^ (h >> 31);
}

// proven_of reports whether the query's source is proven now: a way of
// its bucket with its fingerprint and a time still to come.
static __always_inline int proven_of(const struct query *q)
{
	__u64 h = proven_hash(q);
	__u32 i = h & q->c->proven_mask;
	struct proven_bucket *bk = bpf_map_lookup_elem(&proven, &i);
	if (!bk)
		return 0;
	__u32 fp = (h >> 32) | 1, now = q->now >> PROVEN_SHIFT;
#pragma unroll
	for (int w = 0; w < PROVEN_WAYS; w++) {
		__u64 v = bk->way[w];
		if ((__u32)(v >> 32) == fp && (__u32)v > now)
			return 1;
	}
	return 0;
}

// mark_proven makes the query's source proven for proven_ns from now (an
// answer to its valid token was sent): its way, else the way that ends
// first (a free or past one if any). Two CPUs marking at once may lose one
// mark, which the source's next answer makes again. A function of its own:
// the parse path's frame has no room for it.
static __noinline void mark_proven(const struct query *q)
{
	const struct config *c = q->c;
	if (!c->proven_ns)
		return;
	__u64 h = proven_hash(q);
	__u32 i = h & c->proven_mask;
	struct proven_bucket *bk = bpf_map_lookup_elem(&proven, &i);
	if (!bk)
		return;
	__u32 fp = (h >> 32) | 1;
	__u32 until = (q->now + c->proven_ns) >> PROVEN_SHIFT;
	int pick = 0;
	__u32 first = 0xFFFFFFFF;
#pragma unroll
	for (int w = 0; w < PROVEN_WAYS; w++) {
		__u64 v = bk->way[w];
		if ((__u32)(v >> 32) == fp) {
			pick = w;
			break;
		}
		if ((__u32)v < first) {
			first = (__u32)v;
			pick = w;
		}
	}
	if (pick >= 0 && pick < PROVEN_WAYS)
		bk->way[pick] = ((__u64)fp << 32) | until;
}

// shed is the proven-source tier (the responder's gate.go), for a request
// that does not answer a valid token, before any reply work (no token
// computed, no route looked up, no reply built): it draws one request from
// the CPU's share of the server's unproven packet gate; while that is
// spent, a source not proven (proven_of: one bucket of the proven table
// read) is dropped, counted OUT_UNPROVEN_SHED in the seen table (no
// per-source insert). It returns 1 when the query is shed. Without a gate
// (gate_cost 0) nothing is shed; while the gate has room no lookup is made.
// A function of its own (not inlined): the parse path's frame has no room
// for its registers (the 512 bytes of stack, combined).
static __noinline int shed(struct query *q)
{
	const struct config *c = q->c;
	if (!c->gate_cost)
		return 0;
	__u64 *tat = bpf_map_lookup_elem(&unproven_gate, &q->s.key.server);
	if (tat && gcra(tat, q->now, c->gate_cost, c->gate_tau))
		return 0;
	if (proven_of(q))
		return 0;
	q->stateless = 1;
	count(q, OUT_UNPROVEN_SHED, 0);
	return 1;
}

// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// The per-CPU counters (stats_map), which package xdp sums at scrape time.
#pragma once

#include "maps.h"

// stats are server's counters on this CPU.
static __always_inline struct stats *stats(__u32 server)
{
	return bpf_map_lookup_elem(&stats_map, &server);
}

// no_counts is a new source's entry in the sources map (from read-only
// data: the program's stack has no room to spare).
static const struct source_count no_counts = {};

// count_peer counts a request with an outcome in the source's budget
// entry, in the current drain period's half (the first count of a period
// clears the half: two CPUs doing so at once may lose a count).
static __always_inline void count_peer(struct peer *p, enum outcome out)
{
	__u32 zero = 0;
	struct drain *d = bpf_map_lookup_elem(&drain_map, &zero);
	if (!d)
		return;
	__u32 gen = d->gen, h = gen & 1;
	if (p->count_gen[h] != gen) {
#pragma unroll
		for (int i = 0; i < NOUT; i++)
			p->n[h][i] = 0;
		p->count_gen[h] = gen;
	}
	__sync_fetch_and_add(&p->n[h][out], 1);
	if (!d->dirty)
		d->dirty = 1;
}

// count_source counts a request of source k with an outcome: in its
// budget entry p when it has one, else in the sources map (a source not
// there yet, or forgotten, starts from 0).
static __always_inline void count_source(const struct srckey *k, struct peer *p, enum outcome out)
{
	if (p) {
		count_peer(p, out);
		return;
	}
	struct source_count *sc = bpf_map_lookup_elem(&sources, k);
	if (!sc) {
		bpf_map_update_elem(&sources, k, &no_counts, BPF_NOEXIST);
		sc = bpf_map_lookup_elem(&sources, k);
		if (!sc)
			return;
	}
	__sync_fetch_and_add(&sc->n[out], 1);
}

// seen_slot is the seen table's slot of source k: a multiplicative hash
// of its address and server.
static __always_inline __u32 seen_slot(const struct srckey *k)
{
	__u64 a, b;
	__builtin_memcpy(&a, &k->ip.b[0], 8);
	__builtin_memcpy(&b, &k->ip.b[8], 8);
	__u64 h = (a ^ (b * 0x9E3779B97F4A7C15ULL) ^ k->server) * 0xC2B2AE3D27D4EB4FULL;
	return (__u32)(h >> 40) & (NSEEN - 1);
}

// count_seen counts a request of source k answered without per-source
// state in this CPU's slot of the seen table for it (a slot of another
// source, or of an ended period, starts again from 0): no lock, no
// insert.
static __always_inline void count_seen(const struct srckey *k, enum outcome out)
{
	__u32 zero = 0;
	struct drain *d = bpf_map_lookup_elem(&drain_map, &zero);
	if (!d)
		return;
	__u32 i = seen_slot(k);
	struct seen *e = bpf_map_lookup_elem(&seen_map, &i);
	if (!e)
		return;
	__u32 gen = d->gen;
	__u64 a0, a1, b0, b1;
	__builtin_memcpy(&a0, &e->key.ip.b[0], 8);
	__builtin_memcpy(&a1, &e->key.ip.b[8], 8);
	__builtin_memcpy(&b0, &k->ip.b[0], 8);
	__builtin_memcpy(&b1, &k->ip.b[8], 8);
	if (e->gen != gen || a0 != b0 || a1 != b1 || e->key.server != k->server) {
		__builtin_memcpy(&e->key, k, sizeof(*k));
		e->gen = gen;
#pragma unroll
		for (int j = 0; j < NOUT; j++)
			e->n[j] = 0;
	}
	e->n[out]++;
	if (!d->dirty)
		d->dirty = 1;
}

// count counts the query's request in its protocol's row with an outcome,
// its bytes and the sent ones, and its source. A function of its own (not
// inlined): its parameter's type keeps enum outcome in the object's BTF
// for bpf2go -type.
static __noinline void count(const struct query *q, enum outcome out, __u32 sent)
{
	struct stats *st = stats(q->r.server);
	if (!st)
		return;
	__u32 proto = q->proto;
	if (proto >= MAX_PROTOS || out < 0 || out >= NOUT)
		return;
	st->req[proto][out]++;
	st->in[proto] += q->r.plen;
	st->out[proto] += sent;
	if (q->stateless)
		count_seen(&q->s.key, out);
	else
		count_source(&q->s.key, q->peer, out);
}

// pass_to leaves a datagram to a listen address of server to the socket
// path, counted with the reason (a function of its own, like count: enum
// pass_reason stays in the BTF).
static __noinline int pass_to(__u32 server, enum pass_reason why)
{
	struct stats *st = stats(server);
	if (st && why < NPASS)
		st->passed[why]++;
	return XDP_PASS;
}

// pass_for passes the query's datagram, counted with the reason.
static __always_inline int pass_for(const struct query *q, enum pass_reason why)
{
	return pass_to(q->r.server, why);
}

// pass leaves a datagram the program does not answer to the socket path.
static __always_inline int pass(const struct query *q)
{
	return pass_to(q->r.server, PASS_OTHER);
}

static __always_inline void stat_resize_failed(const struct query *q)
{
	struct stats *st = stats(q->r.server);
	if (st)
		st->resize_failed++;
}

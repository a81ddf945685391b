// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// The per-CPU counters (stats_map), which package xdp sums at scrape time.
#pragma once

#include "maps.h"

static __always_inline struct stats *stats(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&stats_map, &zero);
}

// no_counts is a new source's entry in the sources map (from read-only
// data: the program's stack has no room to spare).
static const struct source_count no_counts = {};

// count_source counts a request of source k with an outcome in the
// sources map (a source not there yet, or forgotten, starts from 0).
static __always_inline void count_source(const struct ipkey *k, enum outcome out)
{
	struct source_count *sc = bpf_map_lookup_elem(&sources, k);
	if (!sc) {
		bpf_map_update_elem(&sources, k, &no_counts, BPF_NOEXIST);
		sc = bpf_map_lookup_elem(&sources, k);
		if (!sc)
			return;
	}
	__sync_fetch_and_add(&sc->n[out], 1);
}

// count counts the query's request as a protocol's with an outcome, its
// bytes and the sent ones, and its source. A function of its own (not
// inlined): its parameters' types keep enum proto and enum outcome in the
// object's BTF for bpf2go -type.
static __noinline void count(const struct query *q, enum proto proto, enum outcome out, __u32 sent)
{
	struct stats *st = stats();
	if (!st)
		return;
	if (proto < 0 || proto >= NPROTO || out < 0 || out >= NOUT)
		return;
	st->req[proto][out]++;
	st->in[proto] += q->r.plen;
	st->out[proto] += sent;
	count_source(&q->s.key, out);
}

// pass_for leaves a datagram to a listen address to the socket path,
// counted with the reason (a function of its own, like count: enum
// pass_reason stays in the BTF).
static __noinline int pass_for(enum pass_reason why)
{
	struct stats *st = stats();
	if (st && why < NPASS)
		st->passed[why]++;
	return XDP_PASS;
}

// pass leaves a datagram the program does not answer to the socket path.
static __always_inline int pass(void)
{
	return pass_for(PASS_OTHER);
}

static __always_inline void stat_resize_failed(void)
{
	struct stats *st = stats();
	if (st)
		st->resize_failed++;
}

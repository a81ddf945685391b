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

// count counts a request of a protocol with an outcome, and its bytes. A
// function of its own (not inlined): its parameters' types keep enum proto
// and enum outcome in the object's BTF for bpf2go -type.
static __noinline void count(enum proto proto, enum outcome out, __u32 in, __u32 sent)
{
	struct stats *st = stats();
	if (!st)
		return;
	if (proto < 0 || proto >= NPROTO || out < 0 || out >= NOUT)
		return;
	st->req[proto][out]++;
	st->in[proto] += in;
	st->out[proto] += sent;
}

// pass leaves a datagram to a listen address to the socket path, counted.
static __always_inline int pass(void)
{
	struct stats *st = stats();
	if (st)
		st->passed++;
	return XDP_PASS;
}

static __always_inline void stat_resize_failed(void)
{
	struct stats *st = stats();
	if (st)
		st->resize_failed++;
}

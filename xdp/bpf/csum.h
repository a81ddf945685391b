// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Internet checksums (RFC 1071): sums of big-endian 16-bit words, folded.
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "structs.h"

// fold folds a 64-bit sum of 16-bit words to 16 bits (ones' complement).
static __always_inline __u32 fold(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u32)s;
}

// sum_small is the sum of a small reply's bytes.
static __always_inline __u64 sum_small(const struct small *m)
{
	__u64 s = 0;
#pragma unroll
	for (int i = 0; i < 16; i++) {
		if (i < m->len)
			s += (i & 1) ? m->b[i] : ((__u64)m->b[i] << 8);
	}
	return s;
}

// ip4_check is the header checksum of an IPv4 header without options
// whose check field is 0.
static __always_inline __u16 ip4_check(const struct iphdr *ip)
{
	__u64 h = 0;
	const __u16 *w = (const __u16 *)ip;
#pragma unroll
	for (int i = 0; i < 10; i++)
		h += bpf_ntohs(w[i]);
	return bpf_htons(~fold(h) & 0xffff);
}

// sum_addr4 and sum_addr6 are an address's words: its share of the UDP
// pseudo-header sum.
static __always_inline __u64 sum_addr4(__u32 a)
{
	return (bpf_ntohl(a) >> 16) + (bpf_ntohl(a) & 0xffff);
}

static __always_inline __u64 sum_addr6(const struct in6_addr *a)
{
	__u64 s = 0;
#pragma unroll
	for (int i = 0; i < 8; i++)
		s += bpf_ntohs(a->in6_u.u6_addr16[i]);
	return s;
}

// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// The reply's next hop from the routing table (bpf_fib_lookup), as the
// socket path's reply would take it: a source with no route back through
// the interface the query came in on (what rp_filter drops) gets nothing
// from the program; the kernel decides. bpf_fib_lookup answers only on an
// interface that forwards; elsewhere (most hosts) the route is looked up in
// the routes trie, the main table as package xdp mirrors it from netlink,
// and the reply goes back to the request's MAC.
#pragma once

#include "strict.h"
#include "structs.h"

// route_mirrored looks the source up in the routes trie: its route must
// leave through the ingress interface, and the source must not be one of
// the interface's addresses (or its subnet broadcast).
static __always_inline int route_mirrored(const struct query *q, const int v6)
{
	const struct req *r = &q->r;
	if (!q->c->routes)
		return PASS_NO_ROUTE;
	struct addrkey a = {.ifindex = r->ifindex};
	struct denykey k = {.prefixlen = 128};
	if (v6) {
		__builtin_memcpy(k.addr, &r->saddr6, 16);
	} else {
		k.addr[10] = k.addr[11] = 0xff;
		__builtin_memcpy(&k.addr[12], &r->saddr4, 4);
	}
	__builtin_memcpy(a.addr, k.addr, 16);
	if (bpf_map_lookup_elem(&local_addrs, &a))
		return PASS_MARTIAN; // our own address, or the subnet broadcast
	__u32 *oif = bpf_map_lookup_elem(&routes, &k);
	if (!oif || *oif != r->ifindex)
		return PASS_NO_ROUTE;
	return -1;
}

// route_back looks the reply up: from our address to the source, as seen
// from the ingress interface (as rp_filter looks), which the route must
// leave through. On success it sets the reply's MACs (the next
// hop's and the interface's) and returns -1; else the reason to pass.
static __always_inline int route_back(struct query *q, const int v6, int *mirrored)
{
	struct req *r = &q->r;
	struct bpf_fib_lookup f = {};
	f.ifindex = r->ifindex;
	f.l4_protocol = IPPROTO_UDP;
	f.sport = r->dport;
	f.dport = r->sport;
	if (v6) {
		f.family = AF_INET6;
		__builtin_memcpy(f.ipv6_src, &r->daddr6, 16);
		__builtin_memcpy(f.ipv6_dst, &r->saddr6, 16);
	} else {
		f.family = AF_INET;
		f.ipv4_src = r->daddr4;
		f.ipv4_dst = r->saddr4;
	}
	long rc = bpf_fib_lookup(q->ctx, &f, sizeof(f), 0);
	if (rc == BPF_FIB_LKUP_RET_FWD_DISABLED) {
		*mirrored = 1;
		return route_mirrored(q, v6);
	}
	if (rc == BPF_FIB_LKUP_RET_NOT_FWDED)
		return PASS_MARTIAN; // a local, broadcast or multicast source
	if (rc != BPF_FIB_LKUP_RET_SUCCESS || f.ifindex != r->ifindex)
		return PASS_NO_ROUTE;
	__builtin_memcpy(r->mac_src, f.dmac, ETH_ALEN);
	__builtin_memcpy(r->mac_dst, f.smac, ETH_ALEN);
	return -1;
}

// route_cached reports whether the source's entry says its route back was
// found good through the ingress interface since the last change of the
// interfaces' addresses, routes and forwarding (an IPv4 source: its key is
// its address).
static __always_inline int route_cached(const struct query *q, const int v6, const struct peer *p)
{
	return !v6 && p && p->route_gen == q->c->route_gen && p->route_oif == q->r.ifindex;
}

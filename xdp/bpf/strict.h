// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// What the kernel checks before it delivers a datagram to a socket, and the
// program before it answers one in its place: a well-formed header, no
// VLAN tag, addressed to this interface (MAC and IP), from a source the
// kernel would answer, not in [limits] deny. Each check returns the reason
// to pass (enum pass_reason), or -1 when the datagram may be answered.
#pragma once

#include "counters.h"
#include "csum.h"

#define ENODATA 61
#define AF_INET 2
#define AF_INET6 10

// bpf_xdp_metadata_rx_vlan_tag (Linux 6.8): the VLAN tag the driver took
// off the frame; only in a device-bound program (queryd_xdp_dev).
extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx, __be16 *vlan_proto, __u16 *vlan_tci) __ksym;

// malformed4 and malformed6 are the header checks the kernel makes (and
// drops on) that the parse path does not already make: the IPv4 total
// length is the UDP datagram's and the header checksum is right; IPv6 is
// version 6, its payload length is the UDP length, the UDP checksum is not
// 0 (mandatory over IPv6).
static __always_inline int malformed4(const struct iphdr *ip, __u32 ulen)
{
	if (bpf_ntohs(ip->tot_len) != sizeof(struct iphdr) + ulen)
		return 1;
	__u64 h = 0;
	const __u16 *w = (const __u16 *)ip;
#pragma unroll
	for (int i = 0; i < 10; i++)
		h += bpf_ntohs(w[i]);
	return fold(h) != 0xffff;
}

static __always_inline int malformed6(const struct ipv6hdr *ip6, const struct udphdr *udp, __u32 ulen)
{
	return ip6->version != 6 || bpf_ntohs(ip6->payload_len) != ulen || udp->check == 0;
}

// martian4 and martian6: sources the kernel drops or does not answer
// (IPv4 0/8, 127/8, multicast and 240/4 with the limited broadcast; IPv6
// ::, ::1, multicast, IPv4-mapped, link-local). Our own addresses and the
// subnet broadcasts are found by the route lookup (route.h).
static __always_inline int martian4(__be32 a)
{
	__u32 top = bpf_ntohl(a) >> 24;
	return top == 0 || top == 127 || top >= 224;
}

static __always_inline int martian6(const struct in6_addr *a)
{
	__u32 w0 = bpf_ntohl(a->in6_u.u6_addr32[0]);
	if ((w0 >> 24) == 0xff || (w0 & 0xffc00000) == 0xfe800000)
		return 1; // multicast, link-local
	if (w0 != 0 || a->in6_u.u6_addr32[1] != 0)
		return 0;
	__u32 w2 = bpf_ntohl(a->in6_u.u6_addr32[2]), w3 = bpf_ntohl(a->in6_u.u6_addr32[3]);
	return (w2 == 0 && w3 <= 1) || w2 == 0xffff; // ::, ::1, ::ffff:a.b.c.d
}

// vlan_tagged reports whether the frame came with a VLAN tag the driver
// took off (rx-vlan-offload), or may have: where the driver cannot say
// (or the program is not device-bound), an interface with VLAN devices on
// it passes every frame.
static __always_inline int vlan_tagged(struct xdp_md *ctx, const struct dest *d, const int devbound)
{
	if (devbound) {
		__be16 proto = 0;
		__u16 tci = 0;
		int err = bpf_xdp_metadata_rx_vlan_tag(ctx, &proto, &tci);
		if (err == 0)
			return 1;
		if (err == -ENODATA)
			return 0;
	}
	return d->iflags & IFACE_VLAN_UPPERS;
}

// destination looks the frame's destination up (dests): a listen address
// of a server, local on the ingress interface; 0 when it is not one.
static __always_inline const struct dest *destination(const int v6, const struct req *r)
{
	struct destkey k = {.ifindex = r->ifindex, .port = r->dport};
	if (v6) {
		__builtin_memcpy(k.addr, &r->daddr6, 16);
	} else {
		k.addr[10] = k.addr[11] = 0xff;
		__builtin_memcpy(&k.addr[12], &r->daddr4, 4);
	}
	return bpf_map_lookup_elem(&dests, &k);
}

static __always_inline int mac_eq(const __u8 *a, const __u8 *b)
{
	__u8 diff = 0;
#pragma unroll
	for (int i = 0; i < ETH_ALEN; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

// strict runs the checks of addressing and source (finding by finding in
// xdp/doc.go) for a frame to destination d (its IP is local on the ingress
// interface): it returns the reason to pass, or -1.
static __always_inline int strict(struct xdp_md *ctx, const int v6, const struct req *r, const struct dest *d,
				  const int devbound)
{
	if (!mac_eq(r->mac_dst, d->mac))
		return PASS_NOT_LOCAL;
	if (r->mac_src[0] & 1)
		return PASS_MARTIAN; // a multicast or broadcast source MAC
	if (v6 ? martian6(&r->saddr6) : martian4(r->saddr4))
		return PASS_MARTIAN;
	if (vlan_tagged(ctx, d, devbound))
		return PASS_VLAN;
	return -1;
}

// denied reports whether the source is in the server's [limits] deny (a
// server with an empty list skips the lookup).
static __always_inline int denied(const struct config *c, const int v6, const struct req *r)
{
	if (!c->deny)
		return 0;
	struct srvdenykey k = {.prefixlen = 32 + 128, .server = bpf_htonl(r->server)};
	if (v6) {
		__builtin_memcpy(k.addr, &r->saddr6, 16);
	} else {
		k.addr[10] = k.addr[11] = 0xff;
		__builtin_memcpy(&k.addr[12], &r->saddr4, 4);
	}
	return bpf_map_lookup_elem(&deny, &k) != 0;
}

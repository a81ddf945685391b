// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// The network headers the program reads and writes: Ethernet, IPv4, IPv6,
// UDP, in the kernel's layout and names (little-endian bit fields: the
// object is bpfel). queryd's own, so that the build needs no system header.
#pragma once

#include <linux/types.h>

#define ETH_ALEN 6
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define IPPROTO_UDP 17

struct ethhdr {
	__u8 h_dest[ETH_ALEN];
	__u8 h_source[ETH_ALEN];
	__be16 h_proto;
} __attribute__((packed));

struct iphdr {
	__u8 ihl : 4, version : 4;
	__u8 tos;
	__be16 tot_len;
	__be16 id;
	__be16 frag_off;
	__u8 ttl;
	__u8 protocol;
	__sum16 check;
	__be32 saddr;
	__be32 daddr;
};

struct in6_addr {
	union {
		__u8 u6_addr8[16];
		__be16 u6_addr16[8];
		__be32 u6_addr32[4];
	} in6_u;
};

struct ipv6hdr {
	__u8 priority : 4, version : 4;
	__u8 flow_lbl[3];
	__be16 payload_len;
	__u8 nexthdr;
	__u8 hop_limit;
	struct in6_addr saddr;
	struct in6_addr daddr;
};

struct udphdr {
	__be16 source;
	__be16 dest;
	__be16 len;
	__sum16 check;
};

// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Programs for the tests and the benchmark only, in their own object
// (querydtest_bpfel.o) so that the daemon loads only what it runs.

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "net.h"

char __license[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pass_udp SEC(".maps");

// queryd_pass passes everything, counting the UDP frames it sees: the tests
// and the bench attach it to the client's end of a veth pair, which then
// receives the frames queryd_xdp sends with XDP_TX (a veth receives XDP
// frames only with a program or GRO), and the bench counts the answers.
SEC("xdp")
int queryd_pass(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	if (data + sizeof(*eth) + sizeof(struct iphdr) > end)
		return XDP_PASS;
	int udp = 0;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		udp = ((struct iphdr *)(eth + 1))->protocol == IPPROTO_UDP;
	else if (eth->h_proto == bpf_htons(ETH_P_IPV6) && data + sizeof(*eth) + sizeof(struct ipv6hdr) <= end)
		udp = ((struct ipv6hdr *)(eth + 1))->nexthdr == IPPROTO_UDP;
	if (udp) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&pass_udp, &zero);
		if (n)
			(*n)++;
	}
	return XDP_PASS;
}

// queryd_vlan_push tags every IPv4 UDP datagram to port 27015 leaving the
// interface with VLAN 10, out of band (skb->vlan_tci, as a NIC with
// rx-vlan-offload delivers a tagged frame): the test attaches it to the
// client's end of the veth (TCX egress), so that the server's program
// sees the frame untagged and the tag only in the metadata.
SEC("tc")
int queryd_vlan_push(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > end)
		return 0;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
	    udp->dest != bpf_htons(27015))
		return 0;
	bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), 10);
	return 0; // TCX_PASS
}

// One source's slot of queryd_echo_state: one cache line.
struct echo_slot {
	__u64 n;
	__u64 pad[7];
};

// echo_slots is queryd_echo_state's per-source table, one line per slot,
// as many slots as [limits] tracked_ips' default (65,536): 4 MiB.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct echo_slot);
} echo_slots SEC(".maps");

// echo_slot_touch adds one to the slot of the source whose address hashes
// to h in echo_slots.
static __always_inline void echo_slot_touch(__u64 h)
{
	__u32 i = (__u32)((h * 0x9E3779B97F4A7C15ULL) >> 48);
	struct echo_slot *s = bpf_map_lookup_elem(&echo_slots, &i);
	if (s)
		__sync_fetch_and_add(&s->n, 1);
}

// echo_swap sends an IPv4 or IPv6 UDP datagram to port 27015 back where it
// came from (Ethernet and IP addresses and UDP ports swapped; the
// checksums stay right: swapping leaves the sums unchanged); it returns
// XDP_PASS for any other frame. With counted, it first adds one to the
// source's slot in echo_slots (its address's hash; an IPv6 source's /64).
static __always_inline int echo_swap(struct xdp_md *ctx, const int counted)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	struct udphdr *udp;
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		udp = (void *)(ip6 + 1);
		if ((void *)(udp + 1) > end || ip6->nexthdr != IPPROTO_UDP || udp->dest != bpf_htons(27015))
			return XDP_PASS;
		if (counted) {
			__u64 m0;
			__builtin_memcpy(&m0, &ip6->saddr, 8);
			echo_slot_touch(m0);
		}
		struct in6_addr a = ip6->saddr;
		ip6->saddr = ip6->daddr;
		ip6->daddr = a;
	} else {
		struct iphdr *ip = (void *)(eth + 1);
		udp = (void *)(ip + 1);
		if ((void *)(udp + 1) > end)
			return XDP_PASS;
		if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
		    udp->dest != bpf_htons(27015))
			return XDP_PASS;
		if (counted)
			echo_slot_touch(ip->saddr);
		__be32 a = ip->saddr;
		ip->saddr = ip->daddr;
		ip->daddr = a;
	}
	__u8 mac[ETH_ALEN];
	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	__be16 p = udp->source;
	udp->source = udp->dest;
	udp->dest = p;
	return XDP_TX;
}

// queryd_echo is the benchmark's baseline: every IPv4 or IPv6 UDP datagram to port
// 27015 goes back with XDP_TX, with no other work. bench/xdp.sh compares
// the fast path's challenge path with it.
SEC("xdp")
int queryd_echo(struct xdp_md *ctx)
{
	return echo_swap(ctx, 0);
}

// queryd_echo_state is the echo with the one thing every program that
// keeps per-source budgets and counts must do: touch the source's state,
// one cache line in a table of 65,536 (an atomic add, as a budget or a
// count writes it). bench/xdp.sh's echo-state arm: what is left between
// the fast path and it is the fast path's own work, not per-source state.
SEC("xdp")
int queryd_echo_state(struct xdp_md *ctx)
{
	return echo_swap(ctx, 1);
}

// The Quake 3 claim (quake3.h), on its own: TestXDPQuake3ClaimsAsGo feeds
// queryd_q3claim spellings and compares its verdict with quake3.Claims.
#define PROTOCOL(name, slots)
#include "quake3.h"
#undef PROTOCOL

// queryd_q3claim returns XDP_DROP for an IPv4 UDP datagram that
// quake3_claim takes, XDP_PASS for any other frame.
SEC("xdp")
int queryd_q3claim(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	__u32 ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(struct udphdr) || (void *)udp + ulen > end)
		return XDP_PASS;
	struct query q = {.ctx = ctx, .p = (void *)(udp + 1), .end = end};
	q.r.plen = ulen - sizeof(struct udphdr);
	return quake3_claim(&q) ? XDP_DROP : XDP_PASS;
}

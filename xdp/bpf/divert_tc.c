// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Divert's egress half (tcx egress on the [xdp] interfaces): a reply
// queryd's socket path sends from a hidden port (the port it binds beside a
// divert address, to which the XDP program hands the queries it does not
// answer itself, divert.h) leaves with the game server's port as its
// source. Nothing else is touched: only UDP from a hidden address and port
// in divert_back. As sqredirect does on its side (tc, bpf_l4_csum_replace):
// with checksum offload (CHECKSUM_PARTIAL, a GSO batch) the checksum field
// holds only the pseudo-header's sum, which the ports are not in, and the
// helper leaves it; otherwise it fixes the full checksum (0, none over
// IPv4, stays 0). Non-first IPv4 fragments carry no UDP header: the first
// carries the port and the whole datagram's checksum.

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "net.h"

char __license[] SEC("license") = "Dual MIT/GPL";

#define TC_ACT_UNSPEC (-1) // tcx: go on to the next program (TCX_NEXT)
#define BPF_F_MARK_MANGLED_0 (1ULL << 5)
#define IPPROTO_FRAGMENT 44

// A hidden socket's address (IPv4 as ::ffff:a.b.c.d) and port, host order.
struct back_key {
	__u8 addr[16];
	__u16 port;
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct back_key);
	__type(value, __u16); // the game port, host order
} divert_back SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} divert_rewritten SEC(".maps"); // replies whose source port was put back

SEC("tc")
int queryd_divert_tc(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > end)
		return TC_ACT_UNSPEC;
	struct back_key k = {};
	__u32 l4;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || (ip->frag_off & bpf_htons(0x1FFF)))
			return TC_ACT_UNSPEC;
		k.addr[10] = k.addr[11] = 0xFF;
		__builtin_memcpy(&k.addr[12], &ip->saddr, 4);
		l4 = sizeof(*eth) + ip->ihl * 4;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end)
			return TC_ACT_UNSPEC;
		__builtin_memcpy(k.addr, &ip6->saddr, 16);
		l4 = sizeof(*eth) + sizeof(*ip6);
		if (ip6->nexthdr == IPPROTO_FRAGMENT) { // the first fragment carries the UDP header
			__u8 *fh = (void *)(ip6 + 1);
			if ((void *)(fh + 8) > end || fh[0] != IPPROTO_UDP || ((fh[2] << 8 | fh[3]) & 0xFFF8))
				return TC_ACT_UNSPEC;
			l4 += 8;
		} else if (ip6->nexthdr != IPPROTO_UDP) {
			return TC_ACT_UNSPEC;
		}
	} else {
		return TC_ACT_UNSPEC;
	}
	struct udphdr *udp = data + l4;
	if ((void *)(udp + 1) > end)
		return TC_ACT_UNSPEC;
	__be16 old = udp->source;
	k.port = bpf_ntohs(old);
	__u16 *game = bpf_map_lookup_elem(&divert_back, &k);
	if (!game)
		return TC_ACT_UNSPEC;
	__be16 new = bpf_htons(*game);
	if (bpf_l4_csum_replace(skb, l4 + __builtin_offsetof(struct udphdr, check), old, new,
				BPF_F_MARK_MANGLED_0 | sizeof(new)) < 0)
		return TC_ACT_UNSPEC;
	if (bpf_skb_store_bytes(skb, l4 + __builtin_offsetof(struct udphdr, source), &new, sizeof(new), 0) < 0)
		return TC_ACT_UNSPEC;
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&divert_rewritten, &zero);
	if (n)
		(*n)++;
	return TC_ACT_UNSPEC;
}

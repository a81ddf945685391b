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

// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// queryd's reuseport steering: an SK_REUSEPORT program attached to the
// reuseport group of one listen address (SO_ATTACH_REUSEPORT_EBPF). A
// datagram from a proven source (one queryd answered a valid challenge
// token from, until its entry's time runs out) goes to one of the proven
// sockets, any other to one of the ordinary sockets, each by the kernel's
// hash of the 4-tuple. A flood of unproven datagrams then fills only the
// ordinary sockets' queues. The Go side (package steer) makes one program
// and socket arrays per group and shares the proven map between them.
//
// Build: go generate ./steer (bpf2go, Debian's clang, xdp/bpf/include).

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD

// A source as the per-source budgets see it: ::ffff:a.b.c.d for IPv4,
// an IPv6 address's /64 followed by zeros (responder's ipKey).
struct steerkey {
	__u8 b[16];
};

// The sockets of each kind in this group; set before loading.
volatile const __u32 n_proven = 1;
volatile const __u32 n_ordinary = 1;

// The proven sources: the time (bpf_ktime_get_ns, CLOCK_MONOTONIC) until
// which each is proven. Shared by every group's program; max_entries is
// set from [limits] tracked_ips.
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct steerkey);
	__type(value, __u64);
} proven SEC(".maps");

// This group's sockets for proven sources and for the others.
struct {
	__uint(type, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} proven_socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ordinary_socks SEC(".maps");

// Datagrams steered: [0] to a proven socket, [1] to an ordinary one,
// [2] from a source whose entry had run out (also in [1]).
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} steered SEC(".maps");

static __always_inline void count(__u32 i)
{
	__u64 *n = bpf_map_lookup_elem(&steered, &i);
	if (n)
		(*n)++;
}

// source reads the datagram's source into k; 0 on success.
static __always_inline int source(struct sk_reuseport_md *md, struct steerkey *k)
{
	if (md->eth_protocol == bpf_htons(ETH_P_IP)) {
		k->b[10] = 0xff;
		k->b[11] = 0xff;
		return bpf_skb_load_bytes_relative(md, 12, &k->b[12], 4, BPF_HDR_START_NET);
	}
	if (md->eth_protocol == bpf_htons(ETH_P_IPV6))
		return bpf_skb_load_bytes_relative(md, 8, &k->b[0], 8, BPF_HDR_START_NET);
	return -1;
}

SEC("sk_reuseport")
int steer(struct sk_reuseport_md *md)
{
	struct steerkey k = {};
	__u32 np = n_proven, no = n_ordinary;
	__u32 idx;

	if (!source(md, &k)) {
		__u64 *until = bpf_map_lookup_elem(&proven, &k);
		if (until) {
			if (*until > bpf_ktime_get_ns()) {
				idx = md->hash % (np ? np : 1);
				if (!bpf_sk_select_reuseport(md, &proven_socks, &idx, 0)) {
					count(0);
					return SK_PASS;
				}
			} else {
				count(2);
			}
		}
	}
	count(1);
	idx = md->hash % (no ? no : 1);
	// On failure (a socket not there yet) the kernel picks by its hash.
	bpf_sk_select_reuseport(md, &ordinary_socks, &idx, 0);
	return SK_PASS;
}

char __license[] SEC("license") = "Dual MIT/GPL";

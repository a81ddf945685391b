// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Divert's joins ([sleep] with [listen] divert, issue 41): a game datagram
// (one no protocol claims) to the address of a game server that sleeps is
// a player arriving. queryd does not own the game port in divert mode, so
// the program tells it: divert_rests holds the divert addresses whose
// server is asleep (package xdp's Divert.Rest puts and removes them), and
// a game datagram to one of them is reported on the ring buffer
// divert_joins (the address and the source), at most once per address
// every DIVERT_JOIN_EVERY_NS, and passed as before (the player's retries
// reach the game server once it is up). queryd.c's divert_in calls
// divert_report for what passed its checks and no claim took.
#pragma once

#include "divert.h"

#define DIVERT_JOIN_EVERY_NS (10ULL * 1000 * 1000) // 10 ms between two reports of one address
#define DIVERT_JOIN_RING (16 * 1024)               // the ring buffer's bytes

// A resting divert address's entry (divert_rests, keyed by divert_key).
struct divert_rest {
	__u64 last; // bpf_ktime_get_ns of the last report (0: none yet)
};

// A report: a game datagram from src to the divert address key.
struct divert_join {
	struct divert_key key; // the game server's address and port (host order)
	__u8 src[16];          // IPv4 as ::ffff:a.b.c.d
	__u16 sport;           // host order
	__u16 pad;
};

// The join counters' columns (queryd_xdp_divert_joins_total{result}).
enum divert_join_result {
	DIVERT_JOIN_REPORTED, // reported on the ring
	DIVERT_JOIN_FULL,     // not reported: the ring was full (queryd reads it too slowly)
	DIVERT_JOIN_LIMITED,  // not reported: the address's last report is under 10 ms old
	NDIVERT_JOIN,
};

struct divert_join_count {
	__u64 n[NDIVERT_JOIN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_DIVERT);
	__type(key, struct divert_key);
	__type(value, struct divert_rest);
} divert_rests SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DIVERT_JOIN_RING);
} divert_joins SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_DIVERT_SERVERS);
	__type(key, __u32);
	__type(value, struct divert_join_count);
} divert_join_stats SEC(".maps");

// divert_join_counted counts a join of server i (a function of its own:
// enum divert_join_result stays in the BTF for bpf2go -type).
static __noinline void divert_join_counted(__u32 server, enum divert_join_result res)
{
	struct divert_join_count *c = bpf_map_lookup_elem(&divert_join_stats, &server);
	if (c && res < NDIVERT_JOIN)
		c->n[res]++;
}

// divert_join_fill writes the report of a datagram from r's source to k
// (a function of its own: struct divert_join stays in the BTF for bpf2go
// -type).
static __noinline void divert_join_fill(struct divert_join *j, const struct divert_key *k, const struct req *r,
					const int v6)
{
	__builtin_memcpy(&j->key, k, sizeof(*k));
	if (v6) {
		__builtin_memcpy(j->src, &r->saddr6, 16);
	} else {
		__builtin_memset(j->src, 0, 10);
		j->src[10] = j->src[11] = 0xFF;
		__builtin_memcpy(&j->src[12], &r->saddr4, 4);
	}
	j->sport = bpf_ntohs(r->sport);
	j->pad = 0;
}

// divert_report reports a game datagram from r's source (sport, network
// order) to the divert address k of server, when k rests and its last
// report is 10 ms old or more. The timestamp is taken with a compare and
// swap: two CPUs never both report within 10 ms.
static __noinline void divert_report(const struct divert_key *k, const struct req *r, const int v6, __u32 server)
{
	struct divert_rest *rest = bpf_map_lookup_elem(&divert_rests, k);
	if (!rest)
		return; // awake: nothing to report
	__u64 now = bpf_ktime_get_ns();
	__u64 last = rest->last;
	if (last && now - last < DIVERT_JOIN_EVERY_NS) {
		divert_join_counted(server, DIVERT_JOIN_LIMITED);
		return;
	}
	if (__sync_val_compare_and_swap(&rest->last, last, now) != last) {
		divert_join_counted(server, DIVERT_JOIN_LIMITED); // another CPU reported
		return;
	}
	struct divert_join *j = bpf_ringbuf_reserve(&divert_joins, sizeof(*j), 0);
	if (!j) {
		divert_join_counted(server, DIVERT_JOIN_FULL);
		return;
	}
	divert_join_fill(j, k, r, v6);
	bpf_ringbuf_submit(j, 0);
	divert_join_counted(server, DIVERT_JOIN_REPORTED);
}

// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// The program's maps; package xdp fills the config and the replies and
// reads the counters. The per-server ones are indexed by the server's
// index (struct dest's server, below MAX_SERVERS), or keyed with it.
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "structs.h"

// Each server's config, by index.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SERVERS);
	__type(key, __u32);
	__type(value, struct config);
} config_map SEC(".maps");

// The destinations the program answers for: one lookup says whether the
// frame is to a listen address of a server that is a local address of the
// ingress interface, and gives the interface's MAC and flags.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_DESTS);
	__type(key, struct destkey);
	__type(value, struct dest);
} dests SEC(".maps");

// The ports some server listens on (1 + a server's index, 0: none): the
// cheap first test every UDP frame meets, and the server a frame to such a
// port but not to a destination is counted at (not_local).
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} ports SEC(".maps");

// A server's replies, by slot (each protocol's handler's slots, in the
// list's order: queryd.c's enum slot_base); package xdp sizes it to the
// list's slots at load.
struct replies_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct reply);
} replies_empty SEC(".maps"); // the first inner array: nothing served yet

// replies holds one inner array of replies per server; the daemon swaps
// in a new one whole, so a query never sees half of an update.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SERVERS);
	__type(key, __u32);
	__array(values, struct replies_inner);
} replies SEC(".maps") = {
	.values = {[0] = &replies_empty},
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_SERVERS);
	__type(key, __u32);
	__type(value, struct stats);
} stats_map SEC(".maps");

// Per-source state at each server: the theoretical arrival time of a GCRA
// token bucket (the same limit as a token bucket of burst tokens at rate
// tokens/s), and the route back found for it (struct peer).
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536); // set from [limits] tracked_ips at load
	__type(key, struct srckey);
	__type(value, struct peer);
} perip SEC(".maps");

// The host-wide per-source budget ([host]): the theoretical arrival time
// of a GCRA per source (IPv4 address or IPv6 /64, struct srckey's ip),
// which every answer to the source draws on, whichever server's, on top of
// that server's (perip).
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536); // set from [host] tracked_ips at load
	__type(key, struct ipkey);
	__type(value, __u64);
} hostip SEC(".maps");

// The per-source packet rates of the protocols that have one (config's
// rate_cost by row; Quake 3's and Bedrock's): a GCRA's theoretical arrival
// time per source, server and protocol.
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536); // set from [limits] tracked_ips at load
	__type(key, struct ratekey);
	__type(value, __u64);
} pktrate SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_SERVERS);
	__type(key, __u32);
	__type(value, __u64);
} unproven SEC(".maps");

// The proven-source tier's gate (budget.h's shed): one CPU's share of each
// server's unproven packet gate, a GCRA's theoretical arrival time, drawn
// by every request that does not answer a valid token.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_SERVERS);
	__type(key, __u32);
	__type(value, __u64);
} unproven_gate SEC(".maps");

// The proven sources (budget.h's proven_of, mark_proven): a set-associative
// table keyed by a keyed hash of the source (struct srckey), one bucket
// read per lookup: no hash-map walk, no insert path, so that the flood the
// tier drops costs one array read.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16384); // set at load from [limits] tracked_ips (a power of two)
	__type(key, __u32);
	__type(value, struct proven_bucket);
} proven SEC(".maps");

// The attached interfaces' addresses and subnet broadcasts (package xdp
// keeps them current from netlink): a source that is one of them gets
// nothing (route.h).
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ADDRS);
	__type(key, struct addrkey);
	__type(value, enum addr_kind);
} local_addrs SEC(".maps");

// [limits] deny of every server: sources whose queries are dropped.
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAX_DENY);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct srvdenykey);
	__type(value, __u8);
} deny SEC(".maps");

// The main routing table's routes (prefix: the output interface, 0 for
// none), for the route back where bpf_fib_lookup cannot look (a host that
// does not forward).
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAX_ROUTES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct denykey);
	__type(value, __u32);
} routes SEC(".maps");

// The requests of each source (IPv4 address or IPv6 /64) of each server
// since package xdp last drained it, where the source has no budget entry
// yet (dropped before a reply: stale, denied, over Quake 3's or Bedrock's
// packet rate); those with one are counted in it (struct peer). Together:
// the status page's busiest sources.
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_SOURCES);
	__type(key, struct srckey);
	__type(value, struct source_count);
} sources SEC(".maps");

// The seen table: per CPU, a slot per hash of the source (a later source
// of the slot's hash takes it over), counting the requests answered without
// per-source state (a reply no larger than its request: never a budget
// entry, so that a spoofed flood of them costs no hash table insert).
// Package xdp sums the CPUs' slots of the ended drain period.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NSEEN);
	__type(key, __u32);
	__type(value, struct seen);
} seen_map SEC(".maps");

// The drain period of the per-source counts in perip (struct drain).
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct drain);
} drain_map SEC(".maps");

// peer_of looks the source's budget entry (perip) up and keeps it in q
// (0 for a source without one): only an answer that amplifies needs it,
// and a token to check (valid), for the token kept there.
static __always_inline struct peer *peer_of(struct query *q)
{
	return q->peer = bpf_map_lookup_elem(&perip, &q->s.key);
}

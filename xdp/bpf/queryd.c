// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// queryd's XDP fast path: answers the hot single-datagram queries (A2S,
// GameSpy4, Quake 3) in the driver with the bytes the socket path would send,
// and passes everything else to the socket path untouched. The Go side
// (package xdp) fills the maps: the config (challenge key, clocks, budgets,
// listen addresses), the pre-encoded replies, and reads the counters.
//
// Build: go generate ./xdp (bpf2go, Debian's clang 14); the object and the Go
// bindings are committed, so building queryd needs no clang.

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char __license[] SEC("license") = "Dual MIT/GPL";

// Reply slots: which pre-encoded reply a query gets (xdp/slots.go).
enum slot {
	SLOT_A2S_INFO,
	SLOT_A2S_PLAYER,
	SLOT_A2S_RULES,
	SLOT_GS4_BASIC,
	SLOT_GS4_FULL,
	SLOT_Q3_INFO,
	SLOT_Q3_STATUS,
	NSLOTS,
};

// Protocols and outcomes: the rows and columns of the counters.
enum proto { PROTO_A2S, PROTO_GS4, PROTO_Q3, NPROTO };
enum outcome { OUT_ANSWERED, OUT_OPEN, OUT_CHALLENGED, OUT_RATE_LIMITED, OUT_STALE, NOUT };

#define MAX_REPLY 1472 // one Ethernet frame's UDP payload over IPv4 at MTU 1500
#define MAX_LISTEN 8
#define EPOCH_NS 30000000000ULL
#define REPLY_OPEN 1 // slot flag: answered without a valid token (A2S_INFO, info_challenge off)

struct reply {
	__u32 len;   // 0: not served here (pass to the socket path)
	__u32 csum;  // ones' complement sum of data as big-endian 16-bit words, folded
	__u32 flags; // REPLY_OPEN
	__u32 pad;
	__u8 data[MAX_REPLY];
};

struct listen {
	__u16 port; // host order; 0: unused entry
	__u8 v6;    // 1: an IPv6 address
	__u8 any;   // 1: any address of the family
	__u8 addr[16] __attribute__((aligned(4)));
};

struct config {
	__u64 k0, k1;      // the challenge issuer's SipHash key
	__u64 wall_offset; // CLOCK_REALTIME - CLOCK_MONOTONIC in ns (two's complement)
	__u64 fresh_until; // monotonic ns after which the feed is stale; ~0: never
	__u64 perip_rate, perip_burst, perip_tau; // bytes/s, bytes, ns (burst/rate)
	__u64 unp_rate, unp_burst, unp_tau;       // one CPU's share of the unproven budget
	__u64 q3_cost, q3_tau;                    // ns per Quake 3 request per source (0: no limit), burst ns
	__u32 mtu;
	__u32 enabled; // 0: pass everything
	struct listen listen[MAX_LISTEN];
};

struct stats {
	__u64 req[NPROTO][NOUT];
	__u64 in[NPROTO];
	__u64 out[NPROTO];
	__u64 passed;        // datagrams to a listen address left to the socket path
	__u64 resize_failed; // replies not sent: the driver could not resize the frame (passed)
};

struct ipkey {
	__u8 b[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct config);
} config_map SEC(".maps");

struct replies_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NSLOTS);
	__type(key, __u32);
	__type(value, struct reply);
} replies_empty SEC(".maps"); // the first inner array: nothing served yet

// replies holds one inner array of replies; the daemon swaps in a new one
// whole, so a query never sees half of an update.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct replies_inner);
} replies SEC(".maps") = {
	.values = {[0] = &replies_empty},
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stats);
} stats_map SEC(".maps");

// Per-source state: the theoretical arrival time of a GCRA token bucket
// (the same limit as a token bucket of burst tokens at rate tokens/s).
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536); // set from [limits] tracked_ips at load
	__type(key, struct ipkey);
	__type(value, __u64);
} perip SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct ipkey);
	__type(value, __u64);
} q3rate SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} unproven SEC(".maps");

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                               \
	do {                                                                   \
		v0 += v1;                                                      \
		v1 = ROTL(v1, 13) ^ v0;                                        \
		v0 = ROTL(v0, 32);                                             \
		v2 += v3;                                                      \
		v3 = ROTL(v3, 16) ^ v2;                                        \
		v0 += v3;                                                      \
		v3 = ROTL(v3, 21) ^ v0;                                        \
		v2 += v1;                                                      \
		v1 = ROTL(v1, 17) ^ v2;                                        \
		v2 = ROTL(v2, 32);                                             \
	} while (0)
#define SIPBLOCK(m)                                                            \
	do {                                                                   \
		v3 ^= (m);                                                     \
		SIPROUND;                                                      \
		SIPROUND;                                                      \
		v0 ^= (m);                                                     \
	} while (0)

// token is challenge.Issuer's token: SipHash-2-4 of the 16-byte address
// (m0, m1, little-endian words) and the epoch, folded to 32 bits, never 0
// nor ~0.
static __noinline __u32 token(__u64 k0, __u64 k1, __u64 m0, __u64 m1, __u64 epoch)
{
	__u64 v0 = k0 ^ 0x736f6d6570736575ULL;
	__u64 v1 = k1 ^ 0x646f72616e646f6dULL;
	__u64 v2 = k0 ^ 0x6c7967656e657261ULL;
	__u64 v3 = k1 ^ 0x7465646279746573ULL;
	SIPBLOCK(m0);
	SIPBLOCK(m1);
	SIPBLOCK(epoch);
	SIPBLOCK(24ULL << 56);
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	__u64 h = v0 ^ v1 ^ v2 ^ v3;
	__u32 t = (__u32)h ^ (__u32)(h >> 32);
	if (t == 0 || t == 0xFFFFFFFF)
		t = 0x5A5A5A5A;
	return t;
}

// GameSpy4's wire form of a token (gamespy4.WireToken).
static __always_inline __u32 gs4_wire(__u32 t)
{
	return 100000 + t % (0x7FFFFFFFU - 100000 + 1);
}

struct src {
	__u64 m0, m1;     // the source address as challenge.Issuer hashes it
	struct ipkey key; // the source as the budgets see it (IPv4, or IPv6 /64)
};

static __always_inline __u64 epoch_now(const struct config *c, __u64 now)
{
	return (now + c->wall_offset) / EPOCH_NS;
}

// valid reports whether tok is the source's current or previous token,
// in GameSpy4's wire form when gs4.
static __always_inline int valid(const struct config *c, const struct src *s, __u64 now, __u32 tok, int gs4)
{
	__u64 e = epoch_now(c, now);
	__u32 t = token(c->k0, c->k1, s->m0, s->m1, e);
	if (gs4)
		t = gs4_wire(t);
	if (t == tok)
		return 1;
	t = token(c->k0, c->k1, s->m0, s->m1, e - 1);
	if (gs4)
		t = gs4_wire(t);
	return t == tok;
}

// gcra takes cost ns from the bucket whose theoretical arrival time is at
// *tat, if it stays within tau of now; several CPUs may share it.
static __always_inline int gcra(__u64 *tat, __u64 now, __u64 cost, __u64 tau)
{
#pragma unroll
	for (int i = 0; i < 4; i++) {
		__u64 old = *(volatile __u64 *)tat;
		__u64 base = old > now ? old : now;
		__u64 next = base + cost;
		if (next - now > tau)
			return 0;
		if (__sync_val_compare_and_swap(tat, old, next) == old)
			return 1;
	}
	return 0;
}

// cost_ns is what n tokens cost at rate tokens/s, rounded up.
static __always_inline __u64 cost_ns(__u64 n, __u64 rate)
{
	return (n * 1000000000ULL + rate - 1) / rate;
}

// bucket_allow takes cost from source k's bucket in map m; a source not
// seen yet (or forgotten by the LRU) starts with a full bucket.
static __always_inline int bucket_allow(void *m, const struct ipkey *k, __u64 now, __u64 cost, __u64 tau)
{
	__u64 *tat = bpf_map_lookup_elem(m, k);
	if (!tat) {
		__u64 first = now + cost;
		if (bpf_map_update_elem(m, k, &first, BPF_NOEXIST) == 0)
			return 1;
		tat = bpf_map_lookup_elem(m, k);
		if (!tat)
			return 0;
	}
	return gcra(tat, now, cost, tau);
}

// budget applies the per-IP byte budget to a reply of size bytes, and the
// CPU's share of the unproven budget when it amplifies (responder.limiter).
static __always_inline int budget(const struct config *c, const struct src *s, __u64 now, __u32 size, int amplifies)
{
	__u64 n = size < c->perip_burst ? size : c->perip_burst;
	if (!bucket_allow(&perip, &s->key, now, cost_ns(n, c->perip_rate), c->perip_tau))
		return 0;
	if (!amplifies)
		return 1;
	__u32 zero = 0;
	__u64 *tat = bpf_map_lookup_elem(&unproven, &zero);
	if (!tat)
		return 0;
	n = size < c->unp_burst ? size : c->unp_burst;
	return gcra(tat, now, cost_ns(n, c->unp_rate), c->unp_tau);
}

static __always_inline void count(int proto, int out, __u32 in, __u32 sent)
{
	__u32 zero = 0;
	struct stats *st = bpf_map_lookup_elem(&stats_map, &zero);
	if (!st)
		return;
	if (proto < 0 || proto >= NPROTO || out < 0 || out >= NOUT)
		return;
	st->req[proto][out]++;
	st->in[proto] += in;
	st->out[proto] += sent;
}

static __always_inline int pass(void)
{
	__u32 zero = 0;
	struct stats *st = bpf_map_lookup_elem(&stats_map, &zero);
	if (st)
		st->passed++;
	return XDP_PASS;
}

static __always_inline void stat_resize_failed(void)
{
	__u32 zero = 0;
	struct stats *st = bpf_map_lookup_elem(&stats_map, &zero);
	if (st)
		st->resize_failed++;
}

static __always_inline __u32 fold(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u32)s;
}

// small is a reply made in the program (a challenge); at most 16 bytes.
struct small {
	__u32 len;
	__u8 b[16];
};

// sum16 is the ones' complement sum of a small reply's bytes.
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

// What the reply needs from the request, read before the frame changes.
struct req {
	__u8 mac_src[ETH_ALEN], mac_dst[ETH_ALEN];
	__u32 saddr4, daddr4;
	struct in6_addr saddr6, daddr6;
	__u16 sport, dport; // network order
	__u8 session[4];    // GameSpy4
	__u32 plen;         // request payload bytes
};

// send turns the frame into the reply: addresses and ports swapped, the
// payload body (a slot's reply, or a small one), the GameSpy4 session at
// payload offset 1 when session is set, both checksums. It returns XDP_TX,
// or XDP_PASS when the frame could not be resized.
static __always_inline int send(struct xdp_md *ctx, const int v6, const struct req *r,
				const struct reply *body, const struct small *sm, int session)
{
	const __u32 l4 = sizeof(struct ethhdr) + (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
	const __u32 poff = l4 + sizeof(struct udphdr);
	__u32 len = body ? body->len : sm->len;
	if (len == 0 || len > MAX_REPLY)
		return pass();
	int delta = (int)(poff + len) - (int)(ctx->data_end - ctx->data);
	// Grow or shrink at the tail; where the driver left no room there (a
	// veth running the program on the sender's skb), grow at the head: the
	// headers are all written anew below.
	if (delta != 0 && bpf_xdp_adjust_tail(ctx, delta) < 0) {
		if (delta < 0 || bpf_xdp_adjust_head(ctx, -delta) < 0) {
			stat_resize_failed();
			return pass();
		}
	}
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	if (data + poff > end)
		return XDP_ABORTED;
	struct ethhdr *eth = data;
	__builtin_memcpy(eth->h_dest, r->mac_src, ETH_ALEN);
	__builtin_memcpy(eth->h_source, r->mac_dst, ETH_ALEN);
	eth->h_proto = bpf_htons(v6 ? ETH_P_IPV6 : ETH_P_IP);
	__u16 ulen = sizeof(struct udphdr) + len;
	__u64 sum = 0;
	if (v6) {
		struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);
		*(__u32 *)ip6 = bpf_htonl(0x60000000); // version 6, no class, no flow label
		ip6->payload_len = bpf_htons(ulen);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		ip6->saddr = r->daddr6;
		ip6->daddr = r->saddr6;
#pragma unroll
		for (int i = 0; i < 8; i++)
			sum += bpf_ntohs(r->saddr6.in6_u.u6_addr16[i]) + bpf_ntohs(r->daddr6.in6_u.u6_addr16[i]);
	} else {
		struct iphdr *ip = data + sizeof(struct ethhdr);
		ip->version = 4;
		ip->ihl = 5;
		ip->tos = 0;
		ip->tot_len = bpf_htons(sizeof(struct iphdr) + ulen);
		ip->id = 0;
		ip->frag_off = bpf_htons(0x4000); // DF, as Linux sends UDP
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->check = 0;
		ip->saddr = r->daddr4;
		ip->daddr = r->saddr4;
		__u64 h = 0;
		__u16 *w = (__u16 *)ip;
#pragma unroll
		for (int i = 0; i < 10; i++)
			h += bpf_ntohs(w[i]);
		ip->check = bpf_htons(~fold(h) & 0xffff);
		sum += (bpf_ntohl(r->saddr4) >> 16) + (bpf_ntohl(r->saddr4) & 0xffff) +
		       (bpf_ntohl(r->daddr4) >> 16) + (bpf_ntohl(r->daddr4) & 0xffff);
	}
	struct udphdr *udp = data + l4;
	udp->source = r->dport;
	udp->dest = r->sport;
	udp->len = bpf_htons(ulen);
	udp->check = 0;
	sum += IPPROTO_UDP + ulen;                                          // pseudo-header
	sum += bpf_ntohs(r->dport) + bpf_ntohs(r->sport) + ulen;            // UDP header
	if (body) {
		if (len == 0 || len > MAX_REPLY || bpf_xdp_store_bytes(ctx, poff, (void *)body->data, len) < 0)
			return XDP_ABORTED;
		sum += body->csum;
	} else {
		__u32 n = sm->len;
		if (n == 0 || n > sizeof(sm->b))
			return XDP_ABORTED;
		if (bpf_xdp_store_bytes(ctx, poff, (void *)sm->b, n) < 0)
			return XDP_ABORTED;
		sum += sum_small(sm);
	}
	if (session) {
		if (bpf_xdp_store_bytes(ctx, poff + 1, (void *)r->session, 4) < 0)
			return XDP_ABORTED;
		// bytes at payload offsets 1..4: low, high, low, high halves of words
		sum += r->session[0] + ((__u64)r->session[1] << 8) + r->session[2] + ((__u64)r->session[3] << 8);
	}
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + poff > end)
		return XDP_ABORTED;
	udp = data + l4;
	__u16 c = ~fold(sum) & 0xffff;
	udp->check = bpf_htons(c ? c : 0xffff);
	return XDP_TX;
}

static __always_inline int listening(const struct config *c, const int v6, const struct req *r)
{
	__u16 port = bpf_ntohs(r->dport);
#pragma unroll
	for (int i = 0; i < MAX_LISTEN; i++) {
		const struct listen *l = &c->listen[i];
		if (l->port != port || l->v6 != v6)
			continue;
		if (l->any)
			return 1;
		const __u32 *a = (const __u32 *)l->addr;
		if (v6 && a[0] == r->daddr6.in6_u.u6_addr32[0] && a[1] == r->daddr6.in6_u.u6_addr32[1] &&
		    a[2] == r->daddr6.in6_u.u6_addr32[2] && a[3] == r->daddr6.in6_u.u6_addr32[3])
			return 1;
		if (!v6 && a[0] == r->daddr4)
			return 1;
	}
	return 0;
}

static __always_inline struct reply *slot(__u32 i)
{
	__u32 zero = 0;
	void *inner = bpf_map_lookup_elem(&replies, &zero);
	if (!inner)
		return 0;
	return bpf_map_lookup_elem(inner, &i);
}

// answer sends a slot's reply, or a small one, under the budgets.
static __always_inline int answer(struct xdp_md *ctx, const int v6, const struct config *c, const struct req *r,
				  const struct src *s, __u64 now, int proto, int out, const struct reply *body,
				  const struct small *sm, int session)
{
	const __u32 l3 = v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	__u32 size = body ? body->len : sm->len;
	if (body && sizeof(struct udphdr) + l3 + size > c->mtu)
		return pass(); // the socket path fragments it
	int amplifies = out != OUT_ANSWERED && size > r->plen;
	if (!budget(c, s, now, size, amplifies)) {
		count(proto, OUT_RATE_LIMITED, r->plen, 0);
		return XDP_DROP;
	}
	int act = send(ctx, v6, r, body, sm, session);
	if (act == XDP_TX)
		count(proto, out, r->plen, size);
	return act;
}

static const char engine[20] = "Source Engine Query";

static __always_inline int bytes_eq(const __u8 *p, const char *w, int n)
{
#pragma unroll
	for (int i = 0; i < 20; i++) {
		if (i >= n)
			break;
		if (p[i] != (__u8)w[i])
			return 0;
	}
	return 1;
}

// lower compares n bytes of p with the lower-case word w, ignoring case.
static __always_inline int lower_eq(const __u8 *p, const char *w, int n)
{
#pragma unroll
	for (int i = 0; i < 9; i++) {
		if (i >= n)
			break;
		__u8 ch = p[i];
		if (ch >= 'A' && ch <= 'Z')
			ch |= 0x20;
		if (ch != (__u8)w[i])
			return 0;
	}
	return 1;
}

static __always_inline int handle(struct xdp_md *ctx, const int v6)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	const __u32 l4 = sizeof(struct ethhdr) + (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
	const __u32 poff = l4 + sizeof(struct udphdr);
	if (data + poff > end)
		return XDP_PASS;
	struct ethhdr *eth = data;
	struct req r = {};
	struct src s = {};
	if (v6) {
		struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);
		if (ip6->nexthdr != IPPROTO_UDP)
			return XDP_PASS;
		r.saddr6 = ip6->saddr;
		r.daddr6 = ip6->daddr;
		__builtin_memcpy(&s.m0, &ip6->saddr.in6_u.u6_addr8[0], 8);
		__builtin_memcpy(&s.m1, &ip6->saddr.in6_u.u6_addr8[8], 8);
		__builtin_memcpy(s.key.b, &ip6->saddr, 16);
		// an IPv4-mapped source is its IPv4 address; others count by /64
		if (!(s.m0 == 0 && (__u32)s.m1 == 0xFFFF0000))
			__builtin_memset(&s.key.b[8], 0, 8);
	} else {
		struct iphdr *ip = data + sizeof(struct ethhdr);
		if (ip->version != 4 || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
			return XDP_PASS;
		if (ip->frag_off & bpf_htons(0x3FFF)) // a fragment: the socket path reassembles
			return XDP_PASS;
		r.saddr4 = ip->saddr;
		r.daddr4 = ip->daddr;
		s.m0 = 0;
		s.m1 = 0xFFFF0000ULL | ((__u64)ip->saddr << 32);
		s.key.b[10] = 0xFF;
		s.key.b[11] = 0xFF;
		__builtin_memcpy(&s.key.b[12], &ip->saddr, 4);
	}
	struct udphdr *udp = data + l4;
	r.sport = udp->source;
	r.dport = udp->dest;
	__u32 ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(struct udphdr) || data + l4 + ulen > end)
		return XDP_PASS;
	r.plen = ulen - sizeof(struct udphdr);
	__builtin_memcpy(r.mac_src, eth->h_source, ETH_ALEN);
	__builtin_memcpy(r.mac_dst, eth->h_dest, ETH_ALEN);

	__u32 zero = 0;
	struct config *c = bpf_map_lookup_elem(&config_map, &zero);
	if (!c || !c->enabled || !listening(c, v6, &r))
		return XDP_PASS;

	__u8 *p = data + poff;
	if (p + 7 > (__u8 *)end || r.plen < 7)
		return pass();
	__u64 now = bpf_ktime_get_ns();
	int stale = now > c->fresh_until;
	struct small sm = {};

	if (p[0] == 0xFE && p[1] == 0xFD) { // GameSpy4
		struct reply *basic = slot(SLOT_GS4_BASIC);
		if (!basic || !basic->len)
			return pass();
		if (p[2] != 0x09 && p[2] != 0x00)
			return pass();
		if (stale) {
			count(PROTO_GS4, OUT_STALE, r.plen, 0);
			return XDP_DROP;
		}
		__builtin_memcpy(r.session, p + 3, 4);
		if (p[2] == 0x09) { // handshake: 09 <session> <token as decimal> 00
			__u32 t = gs4_wire(token(c->k0, c->k1, s.m0, s.m1, epoch_now(c, now)));
			__u8 dig[10];
			int n = 0;
#pragma unroll
			for (int i = 0; i < 10; i++) {
				if (t == 0 && i > 0)
					break;
				dig[i] = '0' + t % 10;
				t /= 10;
				n++;
			}
			sm.b[0] = 0x09;
#pragma unroll
			for (int i = 0; i < 10; i++) {
				if (i < n)
					sm.b[5 + i] = dig[n - 1 - i];
			}
			sm.len = 5 + n + 1; // the final NUL is already 0
			return answer(ctx, v6, c, &r, &s, now, PROTO_GS4, OUT_CHALLENGED, 0, &sm, 1);
		}
		if (r.plen < 11 || p + 11 > (__u8 *)end)
			return pass();
		__u32 tok = ((__u32)p[7] << 24) | ((__u32)p[8] << 16) | ((__u32)p[9] << 8) | p[10];
		if (!valid(c, &s, now, tok, 1))
			return pass(); // the socket path ignores it and counts it
		struct reply *body = r.plen >= 15 ? slot(SLOT_GS4_FULL) : basic;
		if (!body || !body->len)
			return pass();
		return answer(ctx, v6, c, &r, &s, now, PROTO_GS4, OUT_ANSWERED, body, 0, 1);
	}

	if (p[0] != 0xFF || p[1] != 0xFF || p[2] != 0xFF || p[3] != 0xFF)
		return pass();

	__u8 kind = p[4];
	if (kind == 'T' || kind == 'U' || kind == 'V') { // A2S
		struct reply *info = slot(SLOT_A2S_INFO);
		if (!info || !info->len)
			return pass();
		__u32 tok = 0xFFFFFFFF;
		int has = 0;
		if (kind == 'T') {
			if (r.plen < 25 || p + 25 > (__u8 *)end)
				return pass(); // the socket path checks the short forms
			if (!bytes_eq(p + 5, engine, 20))
				return pass(); // "SOURCE\0" (compat) and malformed ones
			if (r.plen >= 29 && p + 29 <= (__u8 *)end) {
				tok = p[25] | ((__u32)p[26] << 8) | ((__u32)p[27] << 16) | ((__u32)p[28] << 24);
				has = 1;
			}
		} else {
			if (r.plen < 9 || p + 9 > (__u8 *)end)
				return pass();
			tok = p[5] | ((__u32)p[6] << 8) | ((__u32)p[7] << 16) | ((__u32)p[8] << 24);
			has = 1;
		}
		if (stale) {
			count(PROTO_A2S, OUT_STALE, r.plen, 0);
			return XDP_DROP;
		}
		int ok = has && tok != 0xFFFFFFFF && valid(c, &s, now, tok, 0);
		if (ok) {
			struct reply *body = info;
			if (kind == 'U')
				body = slot(SLOT_A2S_PLAYER);
			else if (kind == 'V')
				body = slot(SLOT_A2S_RULES);
			if (!body || !body->len)
				return pass(); // several datagrams: the socket path splits them
			return answer(ctx, v6, c, &r, &s, now, PROTO_A2S, OUT_ANSWERED, body, 0, 0);
		}
		if (kind == 'T' && (info->flags & REPLY_OPEN))
			return answer(ctx, v6, c, &r, &s, now, PROTO_A2S, OUT_OPEN, info, 0, 0);
		__u32 t = token(c->k0, c->k1, s.m0, s.m1, epoch_now(c, now));
		sm.len = 9;
		sm.b[0] = sm.b[1] = sm.b[2] = sm.b[3] = 0xFF;
		sm.b[4] = 'A';
		sm.b[5] = t;
		sm.b[6] = t >> 8;
		sm.b[7] = t >> 16;
		sm.b[8] = t >> 24;
		return answer(ctx, v6, c, &r, &s, now, PROTO_A2S, OUT_CHALLENGED, 0, &sm, 0);
	}

	// Quake 3: getinfo / getstatus in any case, then the end, "\n" or NUL;
	// a challenge argument is echoed in the reply: the socket path does it.
	if (kind != 'g' && kind != 'G')
		return pass();
	__u32 which;
	if (r.plen >= 13 && p + 13 <= (__u8 *)end && lower_eq(p + 4, "getstatus", 9)) {
		which = SLOT_Q3_STATUS;
		if (r.plen > 13) {
			if (p + 14 > (__u8 *)end || (p[13] != '\n' && p[13] != 0))
				return pass();
		}
	} else if (r.plen >= 11 && p + 11 <= (__u8 *)end && lower_eq(p + 4, "getinfo", 7)) {
		which = SLOT_Q3_INFO;
		if (r.plen > 11) {
			if (p + 12 > (__u8 *)end || (p[11] != '\n' && p[11] != 0))
				return pass();
		}
	} else {
		return pass();
	}
	struct reply *body = slot(which);
	if (!body || !body->len)
		return pass();
	if (stale) {
		count(PROTO_Q3, OUT_STALE, r.plen, 0);
		return XDP_DROP;
	}
	if (c->q3_cost && !bucket_allow(&q3rate, &s.key, now, c->q3_cost, c->q3_tau)) {
		count(PROTO_Q3, OUT_RATE_LIMITED, r.plen, 0);
		return XDP_DROP;
	}
	return answer(ctx, v6, c, &r, &s, now, PROTO_Q3, OUT_OPEN, body, 0, 0);
}

SEC("xdp")
int queryd_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	if (data + sizeof(*eth) > end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		return handle(ctx, 0);
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return handle(ctx, 1);
	return XDP_PASS;
}

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

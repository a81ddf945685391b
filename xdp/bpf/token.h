// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// challenge.Issuer's tokens: SipHash-2-4 of the source address and the
// 30 s epoch under the daemon's key.
#pragma once

#include "maps.h"

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

// epoch_now is the token epoch at monotonic time now: the one package xdp
// wrote at its last sync (every 50 ms) or the next, without a division;
// (now + wall_offset) / EPOCH_NS should the sync lag by an epoch.
static __always_inline __u64 epoch_now(const struct config *c, __u64 now)
{
	if (now < c->epoch_next && now + EPOCH_NS >= c->epoch_next)
		return c->epoch;
	if (now >= c->epoch_next && now < c->epoch_next + EPOCH_NS)
		return c->epoch + 1;
	return (now + c->wall_offset) / EPOCH_NS;
}

// token_of is the source's token of epoch e: from its budget entry, if
// already looked up (peer_of), when it holds e's (an IPv4 source: its key is its address; one 64-bit word,
// so that a CPU never reads one epoch with another's token), else computed
// and kept there.
static __always_inline __u32 token_of(const struct query *q, __u64 e)
{
	struct peer *p = q->peer;
	int v4 = q->s.m0 == 0 && (__u32)q->s.m1 == 0xFFFF0000;
	if (p && v4) {
		__u64 kept = *(volatile __u64 *)&p->tok;
		if (kept && (kept >> 32) == (__u32)e)
			return (__u32)kept;
	}
	__u32 t = token(q->c->k0, q->c->k1, q->s.m0, q->s.m1, e);
	if (p && v4)
		*(volatile __u64 *)&p->tok = ((__u64)(__u32)e << 32) | t;
	return t;
}

// current is the source's token of this epoch.
static __always_inline __u32 current(const struct query *q)
{
	return token_of(q, epoch_now(q->c, q->now));
}

// valid reports whether tok is the source's current or previous token,
// in GameSpy4's wire form when gs4. It looks the source's budget entry up
// (peer_of): the answer to a valid token amplifies and needs it anyway.
static __always_inline int valid(struct query *q, __u32 tok, int gs4)
{
	const struct config *c = q->c;
	peer_of(q);
	__u64 e = epoch_now(c, q->now);
	__u32 t = token_of(q, e);
	if (gs4)
		t = gs4_wire(t);
	if (t == tok)
		return 1;
	t = token(c->k0, c->k1, q->s.m0, q->s.m1, e - 1);
	if (gs4)
		t = gs4_wire(t);
	return t == tok;
}

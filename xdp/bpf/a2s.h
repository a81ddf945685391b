// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// A2S (Source engine queries): INFO, PLAYER and RULES, with the 9-byte
// challenge for sources without a valid token.
#ifndef QUERYD_A2S_H // not #pragma once: protocols.h includes it again for its last line
#define QUERYD_A2S_H

#include "reply.h"
#include "token.h"

// a2s's replies (module.FastReply's Query: "info", "player", "rules").
enum a2s_slot {
	A2S_INFO,
	A2S_PLAYER,
	A2S_RULES,
	A2S_SLOTS,
};

static const char a2s_engine[20] = "Source Engine Query";

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

// a2s_pad reports whether the payload after the type byte is NUL padding
// only (A2S GETCHALLENGE and A2A_PING; at most 64 bytes: longer is not
// taken for one).
static __always_inline int a2s_pad(const struct query *q)
{
	if (q->r.plen > 64)
		return 0;
	for (__u32 i = 5; i < 64 && i < q->r.plen; i++) { // a bounded loop, not unrolled
		const __u8 *b = q->p + i;
		if ((void *)(b + 1) > q->end || *b != 0)
			return 0;
	}
	return 1;
}

// a2s_claim takes a whole A2S request, as a2s.ParseRequest reads it (not
// the first bytes alone: divert leaves everything else to the game
// server): FF FF FF FF then T and the whole "Source Engine Query\0"
// (INFO; a token and padding may follow), U (PLAYER) or V (RULES) with
// their 4-byte challenge, exactly 9 bytes; W (GETCHALLENGE) or i
// (A2A_PING) with only NUL padding after; the compat retry A at exactly 9
// bytes. The compat INFO ("SOURCE\0") goes to the socket path unclaimed.
static __always_inline int a2s_claim(const struct query *q)
{
	const __u8 *p = q->p;
	if (!has(q, 5) || p[0] != 0xFF || p[1] != 0xFF || p[2] != 0xFF || p[3] != 0xFF)
		return 0;
	__u8 t = p[4];
	if (t == 'T')
		return has(q, 25) && bytes_eq(p + 5, a2s_engine, 20);
	if (t == 'U' || t == 'V' || t == 'A')
		return q->r.plen == 9;
	if (t == 'W' || t == 'i')
		return a2s_pad(q);
	return 0;
}

// a2s_challenge sends the 9-byte challenge: FF FF FF FF 'A' <token LE>.
static __always_inline int a2s_challenge(struct query *q, const int v6)
{
	struct small sm = {};
	__u32 t = current(q);
	sm.len = 9;
	sm.b[0] = sm.b[1] = sm.b[2] = sm.b[3] = 0xFF;
	sm.b[4] = 'A';
	sm.b[5] = t;
	sm.b[6] = t >> 8;
	sm.b[7] = t >> 16;
	sm.b[8] = t >> 24;
	return answer(q, v6, OUT_CHALLENGED, 0, &sm, 0);
}

// a2s_handle answers INFO, PLAYER and RULES (the other requests a2s_claim
// takes go to the socket path).
static __always_inline int a2s_handle(struct query *q, const int v6)
{
	__u8 *p = q->p;
	if (!has(q, 5))
		return pass(q);
	__u8 kind = p[4];
	if (kind != 'T' && kind != 'U' && kind != 'V')
		return pass(q); // GETCHALLENGE, A2A_PING, the compat retry
	struct reply *info = slot(q, A2S_INFO);
	if (!info || !info->len)
		return pass(q);
	__u32 tok = 0xFFFFFFFF;
	int tokened = 0;
	if (kind == 'T') { // a2s_claim took the whole "Source Engine Query\0"
		if (has(q, 29)) {
			tok = p[25] | ((__u32)p[26] << 8) | ((__u32)p[27] << 16) | ((__u32)p[28] << 24);
			tokened = 1;
		}
	} else {
		if (!has(q, 9))
			return pass(q);
		tok = p[5] | ((__u32)p[6] << 8) | ((__u32)p[7] << 16) | ((__u32)p[8] << 24);
		tokened = 1;
	}
	if (silenced(q))
		return XDP_DROP;
	if (tokened && tok != 0xFFFFFFFF && valid(q, tok, 0)) {
		struct reply *body = info;
		if (kind == 'U')
			body = slot(q, A2S_PLAYER);
		else if (kind == 'V')
			body = slot(q, A2S_RULES);
		if (!body || !body->len)
			return pass(q); // several datagrams: the socket path splits them
		return answer(q, v6, OUT_ANSWERED, body, 0, 0);
	}
	if (shed(q))
		return XDP_DROP;
	if (kind == 'T' && (info->flags & REPLY_OPEN))
		return answer(q, v6, OUT_OPEN, info, 0, 0);
	return a2s_challenge(q, v6);
}

#endif

PROTOCOL(a2s, A2S_SLOTS)

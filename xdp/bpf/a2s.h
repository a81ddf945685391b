// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// A2S (Source engine queries): INFO, PLAYER and RULES, with the 9-byte
// challenge for sources without a valid token.
#pragma once

#include "reply.h"
#include "token.h"

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
	return answer(q, v6, PROTO_A2S, OUT_CHALLENGED, 0, &sm, 0);
}

// a2s handles FF FF FF FF then T (INFO), U (PLAYER) or V (RULES).
static __always_inline int a2s(struct query *q, const int v6)
{
	__u8 *p = q->p;
	__u8 kind = p[4];
	struct reply *info = slot(q, SLOT_A2S_INFO);
	if (!info || !info->len)
		return pass(q);
	__u32 tok = 0xFFFFFFFF;
	int tokened = 0;
	if (kind == 'T') {
		if (!has(q, 25))
			return pass(q); // the socket path checks the short forms
		if (!bytes_eq(p + 5, a2s_engine, 20))
			return pass(q); // "SOURCE\0" (compat) and malformed ones
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
	if (q->stale) {
		count(q, PROTO_A2S, OUT_STALE, 0);
		return XDP_DROP;
	}
	if (tokened && tok != 0xFFFFFFFF && valid(q, tok, 0)) {
		struct reply *body = info;
		if (kind == 'U')
			body = slot(q, SLOT_A2S_PLAYER);
		else if (kind == 'V')
			body = slot(q, SLOT_A2S_RULES);
		if (!body || !body->len)
			return pass(q); // several datagrams: the socket path splits them
		return answer(q, v6, PROTO_A2S, OUT_ANSWERED, body, 0, 0);
	}
	if (kind == 'T' && (info->flags & REPLY_OPEN))
		return answer(q, v6, PROTO_A2S, OUT_OPEN, info, 0, 0);
	return a2s_challenge(q, v6);
}

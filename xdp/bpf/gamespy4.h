// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// GameSpy4 (FE FD): the handshake (09) and the basic and full stats (00)
// with a valid token.
#pragma once

#include "reply.h"
#include "token.h"

// gs4_handshake sends 09 <session> <token in decimal> 00.
static __always_inline int gs4_handshake(struct query *q, const int v6)
{
	struct small sm = {};
	__u32 t = gs4_wire(current(q));
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
	return answer(q, v6, PROTO_GS4, OUT_CHALLENGED, 0, &sm, 4);
}

// gamespy4 handles FE FD 09 (handshake) and FE FD 00 (stat).
static __always_inline int gamespy4(struct query *q, const int v6)
{
	__u8 *p = q->p;
	struct reply *basic = slot(q, SLOT_GS4_BASIC);
	if (!basic || !basic->len)
		return pass(q);
	if (p[2] != 0x09 && p[2] != 0x00)
		return pass(q);
	if (q->stale) {
		count(q, PROTO_GS4, OUT_STALE, 0);
		return XDP_DROP;
	}
	__builtin_memcpy(q->r.echo, p + 3, 4); // the session, at reply offset 1
	if (p[2] == 0x09)
		return gs4_handshake(q, v6);
	if (!has(q, 11))
		return pass(q);
	__u32 tok = ((__u32)p[7] << 24) | ((__u32)p[8] << 16) | ((__u32)p[9] << 8) | p[10];
	if (!valid(q, tok, 1))
		return pass(q); // the socket path ignores it and counts it
	struct reply *body = q->r.plen >= 15 ? slot(q, SLOT_GS4_FULL) : basic;
	if (!body || !body->len)
		return pass(q);
	return answer(q, v6, PROTO_GS4, OUT_ANSWERED, body, 0, 4);
}

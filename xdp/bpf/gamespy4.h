// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// GameSpy4 (FE FD): the handshake (09) and the basic and full stats (00)
// with a valid token.
#ifndef QUERYD_GAMESPY4_H // not #pragma once: protocols.h includes it again for its last line
#define QUERYD_GAMESPY4_H

#include "reply.h"
#include "token.h"

// gamespy4's replies (module.FastReply's Query: "basic", "full").
enum gamespy4_slot {
	GAMESPY4_BASIC,
	GAMESPY4_FULL,
	GAMESPY4_SLOTS,
};

// gamespy4_claim takes a whole GameSpy4 request (not FE FD alone: a
// Quake 3 client's datagram starts so once in 65,536): FE FD 09 and the
// session, exactly 7 bytes (handshake); FE FD 00, the session and the
// token, exactly 11 bytes (basic stat) or 15 with the full stat's padding
// FF FF FF 01 or 00 00 00 00.
static __always_inline int gamespy4_claim(const struct query *q)
{
	const __u8 *p = q->p;
	__u32 n = q->r.plen;
	if (n == 7) // constant lengths in has(): the verifier learns the packet's range from them
		return has(q, 7) && p[0] == 0xFE && p[1] == 0xFD && p[2] == 0x09;
	if ((n != 11 && n != 15) || !has(q, 11) || p[0] != 0xFE || p[1] != 0xFD || p[2] != 0x00)
		return 0;
	if (n == 11)
		return 1;
	if (!has(q, 15))
		return 0;
	__u32 pad = ((__u32)p[11] << 24) | ((__u32)p[12] << 16) | ((__u32)p[13] << 8) | p[14];
	return pad == 0xFFFFFF01 || pad == 0;
}

// gs4_handshake sends 09 <session> <token in decimal> 00.
static __always_inline int gs4_handshake(struct query *q, const int v6)
{
	if (shed(q))
		return XDP_DROP;
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
	return answer(q, v6, OUT_CHALLENGED, 0, &sm, 4);
}

// gamespy4_handle answers FE FD 09 (handshake) and FE FD 00 (stat).
static __always_inline int gamespy4_handle(struct query *q, const int v6)
{
	__u8 *p = q->p;
	if (!has(q, 7))
		return pass(q);
	struct reply *basic = slot(q, GAMESPY4_BASIC);
	if (!basic || !basic->len)
		return pass(q);
	if (p[2] != 0x09 && p[2] != 0x00)
		return pass(q);
	if (silenced(q))
		return XDP_DROP;
	__builtin_memcpy(q->r.echo, p + 3, 4); // the session, at reply offset 1
	if (p[2] == 0x09)
		return gs4_handshake(q, v6);
	if (!has(q, 11))
		return pass(q);
	__u32 tok = ((__u32)p[7] << 24) | ((__u32)p[8] << 16) | ((__u32)p[9] << 8) | p[10];
	if (!valid(q, tok, 1))
		return pass(q); // the socket path ignores it and counts it
	struct reply *body = q->r.plen >= 15 ? slot(q, GAMESPY4_FULL) : basic;
	if (!body || !body->len)
		return pass(q);
	return answer(q, v6, OUT_ANSWERED, body, 0, 4);
}

#endif

PROTOCOL(gamespy4, GAMESPY4_SLOTS)

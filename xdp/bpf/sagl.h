// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// SAGL: a 64-byte "SAGQ" request of version 1 and kind 1 (info) or 2
// (logo) without a valid token gets the 12-byte challenge; an info request
// with a valid token the info reply when the JSON is one part. Logo pieces,
// JSON of several parts and other shapes go to the socket path.
#ifndef QUERYD_SAGL_H // not #pragma once: protocols.h includes it again for its last line
#define QUERYD_SAGL_H

#include "challenge.h"

#define SAGL_REQUEST_LEN 64

// sagl's replies (module.FastReply's Query: "challenge", a template whose
// token the program writes in; "info").
enum sagl_slot {
	SAGL_CHALLENGE,
	SAGL_INFO,
	SAGL_SLOTS,
};

// sagl_claim takes a whole SAGL request (sagl.ParseRequest): exactly 64
// bytes, "SAGQ", version 1, kind 1 (info) or 2 (logo).
static __always_inline int sagl_claim(const struct query *q)
{
	const __u8 *p = q->p;
	return q->r.plen == SAGL_REQUEST_LEN && has(q, SAGL_REQUEST_LEN) && p[0] == 'S' && p[1] == 'A' &&
	       p[2] == 'G' && p[3] == 'Q' && p[4] == 1 && (p[5] == 1 || p[5] == 2);
}

// sagl_handle answers a datagram sagl_claim takes.
static __always_inline int sagl_handle(struct query *q, const int v6)
{
	const __u8 *p = q->p;
	if (!has(q, SAGL_REQUEST_LEN))
		return pass(q);
	struct reply *ch = slot(q, SAGL_CHALLENGE);
	if (!ch || !ch->len)
		return pass(q);
	if (silenced(q))
		return XDP_DROP;
	__u32 tok = p[8] | ((__u32)p[9] << 8) | ((__u32)p[10] << 16) | ((__u32)p[11] << 24);
	if (tok == 0 || !valid(q, tok, 0))
		return challenge_reply(q, v6, ch, 8, 0);
	if (p[5] != 1)
		return pass(q); // a logo piece: the socket path
	struct reply *body = slot(q, SAGL_INFO);
	if (!body || !body->len)
		return pass(q); // several parts: the socket path sends them
	return answer(q, v6, OUT_ANSWERED, body, 0, 0);
}

#endif

PROTOCOL(sagl, SAGL_SLOTS)

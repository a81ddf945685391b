// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Unity SQP: the challenge (00 00 00 00 00, exactly 5 bytes) and the query
// (01 token(u32, big-endian) version(u16 = 1) chunks(u8), exactly 8 bytes)
// with a valid token, when the module handed over that chunks byte's reply
// (one datagram). A query with a wrong token (the socket path ignores it)
// or unknown chunk bits (malformed there) goes to the socket path.
#pragma once

#include "challenge.h"

#define SQP_CHALLENGE_LEN 5
#define SQP_QUERY_LEN 8

// is_sqp reports whether the payload has one of SQP's two exact shapes.
static __always_inline int is_sqp(const struct query *q)
{
	const __u8 *p = q->p;
	if (q->r.plen == SQP_CHALLENGE_LEN)
		return has(q, SQP_CHALLENGE_LEN) && (p[0] | p[1] | p[2] | p[3] | p[4]) == 0;
	if (q->r.plen == SQP_QUERY_LEN)
		return has(q, SQP_QUERY_LEN) && p[0] == 0x01 && p[5] == 0 && p[6] == 1;
	return 0;
}

// sqp handles a datagram is_sqp accepts.
static __always_inline int sqp(struct query *q, const int v6)
{
	const __u8 *p = q->p;
	struct reply *ch = slot(q, SLOT_SQP_CHALLENGE);
	if (!ch || !ch->len)
		return pass(q);
	if (q->stale) {
		count(q, PROTO_SQP, OUT_STALE, 0);
		return XDP_DROP;
	}
	if (q->r.plen == SQP_CHALLENGE_LEN)
		return challenge_reply(q, v6, PROTO_SQP, ch, 1, 1);
	if (!has(q, SQP_QUERY_LEN))
		return pass(q);
	__u32 chunks = p[7];
	if (chunks >= SQP_CHUNKS)
		return pass(q); // unknown chunk bits: the socket path counts it malformed
	__u32 tok = ((__u32)p[1] << 24) | ((__u32)p[2] << 16) | ((__u32)p[3] << 8) | p[4];
	if (!valid(q, tok, 0))
		return pass(q); // the socket path ignores it and counts it
	struct reply *body = slot(q, SLOT_SQP_QUERY + chunks);
	if (!body || !body->len)
		return pass(q); // several datagrams: the socket path sends them
	__builtin_memcpy(q->r.echo, p + 1, 4); // every reply header carries the query's token
	return answer(q, v6, PROTO_SQP, OUT_ANSWERED, body, 0, 4);
}

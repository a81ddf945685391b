// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Unity SQP: the challenge (00 00 00 00 00, exactly 5 bytes) and the query
// (01 token(u32, big-endian) version(u16 = 1) chunks(u8), exactly 8 bytes)
// with a valid token, when the module handed over that chunks byte's reply
// (one datagram). A query with a wrong token (the socket path ignores it)
// goes to the socket path, one with unknown chunk bits too (unclaimed:
// malformed there).
#ifndef QUERYD_SQP_H // not #pragma once: protocols.h includes it again for its last line
#define QUERYD_SQP_H

#include "challenge.h"

#define SQP_CHALLENGE_LEN 5
#define SQP_QUERY_LEN 8

// sqp's replies (module.FastReply's Query: "challenge", a template whose
// token the program writes in; "query" with Index the chunks byte, a range
// of 32 slots).
enum sqp_slot {
	SQP_CHALLENGE,
	SQP_QUERY,
	SQP_QUERY_LAST = SQP_QUERY + 31,
	SQP_SLOTS,
};

// sqp_claim takes a whole SQP request: five zero bytes, exactly (the
// challenge); or exactly 8 bytes, 01, the token, version 1 and a chunks
// byte of known bits only (the query; sqp.ParseRequest refuses others).
static __always_inline int sqp_claim(const struct query *q)
{
	const __u8 *p = q->p;
	if (q->r.plen == SQP_CHALLENGE_LEN)
		return has(q, SQP_CHALLENGE_LEN) && (p[0] | p[1] | p[2] | p[3] | p[4]) == 0;
	if (q->r.plen == SQP_QUERY_LEN)
		return has(q, SQP_QUERY_LEN) && p[0] == 0x01 && p[5] == 0 && p[6] == 1 &&
		       p[7] <= SQP_QUERY_LAST - SQP_QUERY;
	return 0;
}

// sqp_handle answers a datagram sqp_claim takes.
static __always_inline int sqp_handle(struct query *q, const int v6)
{
	const __u8 *p = q->p;
	struct reply *ch = slot(q, SQP_CHALLENGE);
	if (!ch || !ch->len)
		return pass(q);
	if (silenced(q))
		return XDP_DROP;
	if (q->r.plen == SQP_CHALLENGE_LEN)
		return challenge_reply(q, v6, ch, 1, 1);
	if (!has(q, SQP_QUERY_LEN))
		return pass(q);
	__u32 chunks = p[7];
	if (chunks > SQP_QUERY_LAST - SQP_QUERY)
		return pass(q); // not claimed (sqp_claim), but the verifier wants the bound
	__u32 tok = ((__u32)p[1] << 24) | ((__u32)p[2] << 16) | ((__u32)p[3] << 8) | p[4];
	if (!valid(q, tok, 0))
		return pass(q); // the socket path ignores it and counts it
	struct reply *body = slot(q, SQP_QUERY + chunks);
	if (!body || !body->len)
		return pass(q); // several datagrams: the socket path sends them
	__builtin_memcpy(q->r.echo, p + 1, 4); // every reply header carries the query's token
	return answer(q, v6, OUT_ANSWERED, body, 0, 4);
}

#endif

PROTOCOL(sqp, SQP_SLOTS)

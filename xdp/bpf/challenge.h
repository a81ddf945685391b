// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// A challenge made from a module's template: the reply bytes the module
// hands over (FastSQPChallenge, FastSAGLChallenge) with the source's
// current token written in at a fixed offset.
#pragma once

#include "reply.h"
#include "token.h"

// challenge_reply sends the template tpl (at most 16 bytes) with the
// source's current token at payload offset off, big-endian when be, else
// little-endian, as the query's protocol's challenge.
static __always_inline int challenge_reply(struct query *q, const int v6, const struct reply *tpl, const __u32 off,
					   const int be)
{
	if (shed(q))
		return XDP_DROP;
	struct small sm = {};
	__u32 n = tpl->len;
	if (n > sizeof(sm.b) || n < off + 4)
		return pass(q);
#pragma unroll
	for (int i = 0; i < sizeof(sm.b); i++) {
		if (i < n)
			sm.b[i] = tpl->data[i];
	}
	__u32 t = current(q);
#pragma unroll
	for (int j = 0; j < 4; j++)
		sm.b[off + j] = be ? t >> (24 - 8 * j) : t >> (8 * j);
	sm.len = n;
	return answer(q, v6, OUT_CHALLENGED, 0, &sm, 0);
}

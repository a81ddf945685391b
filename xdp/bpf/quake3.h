// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Quake 3: getinfo and getstatus (any case), under Quake 3's per-source
// packet rate; a challenge argument is echoed in the reply, so such a
// request goes to the socket path.
#pragma once

#include "reply.h"

// lower_eq compares n bytes of p with the lower-case word w, ignoring case.
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

// q3_ends reports whether the payload ends after n bytes, or goes on with
// only "\n" or NUL.
static __always_inline int q3_ends(const struct query *q, __u32 n)
{
	if (q->r.plen <= n)
		return 1;
	const __u8 *p = q->p;
	if (p + n + 1 > (__u8 *)q->end)
		return 0;
	return p[n] == '\n' || p[n] == 0;
}

// quake3 handles FF FF FF FF getinfo / getstatus, then the end, "\n" or NUL.
static __always_inline int quake3(struct query *q, const int v6)
{
	__u8 *p = q->p;
	__u32 which;
	if (has(q, 13) && lower_eq(p + 4, "getstatus", 9)) {
		which = SLOT_Q3_STATUS;
		if (!q3_ends(q, 13))
			return pass(q);
	} else if (has(q, 11) && lower_eq(p + 4, "getinfo", 7)) {
		which = SLOT_Q3_INFO;
		if (!q3_ends(q, 11))
			return pass(q);
	} else {
		return pass(q);
	}
	struct reply *body = slot(q, which);
	if (!body || !body->len)
		return pass(q);
	if (q->stale) {
		count(q, PROTO_Q3, OUT_STALE, 0);
		return XDP_DROP;
	}
	const struct config *c = q->c;
	if (c->q3_cost && !bucket_allow(&q3rate, &q->s.key, q->now, c->q3_cost, c->q3_tau)) {
		count(q, PROTO_Q3, OUT_RATE_LIMITED, 0);
		return XDP_DROP;
	}
	return answer(q, v6, PROTO_Q3, OUT_OPEN, body, 0, 0);
}

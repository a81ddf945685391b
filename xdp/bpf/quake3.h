// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Quake 3: getinfo and getstatus (any case), under Quake 3's per-source
// packet rate; a challenge argument is echoed in the reply, so such a
// request goes to the socket path.
#ifndef QUERYD_QUAKE3_H // not #pragma once: protocols.h includes it again for its last line
#define QUERYD_QUAKE3_H

#include "reply.h"

// quake3's replies (module.FastReply's Query: "info", "status").
enum quake3_slot {
	QUAKE3_INFO,
	QUAKE3_STATUS,
	QUAKE3_SLOTS,
};

// fold_eq compares n bytes of p with the lower-case word w, ignoring case.
static __always_inline int fold_eq(const __u8 *p, const char *w, const int n)
{
	int same = 1;
#pragma unroll
	for (int i = 0; i < 9; i++) {
		if (i < n) {
			__u8 ch = p[i];
			if (ch >= 'A' && ch <= 'Z')
				ch |= 0x20;
			same &= ch == (__u8)w[i];
		}
	}
	return same;
}

// q3_word_ends reports whether the command word that ends n bytes into
// the payload is the whole word (ParseRequest's reading): the payload
// ends there, or goes on with NUL, "\n", or a space, tab or "\r" before
// an argument.
static __always_inline int q3_word_ends(const struct query *q, const __u32 n)
{
	if (q->r.plen == n)
		return 1;
	const __u8 *p = q->p;
	if (p + n + 1 > (__u8 *)q->end)
		return 0;
	__u8 c = p[n];
	return c == 0 || c == '\n' || c == ' ' || c == '\t' || c == '\r';
}

// quake3_claim takes a whole Quake 3 query (quake3.ParseRequest): FF FF
// FF FF then getinfo or getstatus in any case, as a word of its own
// ("getinfoX" is not one: divert leaves it to the game server).
static __always_inline int quake3_claim(const struct query *q)
{
	const __u8 *p = q->p;
	if (!has(q, 11) || p[0] != 0xFF || p[1] != 0xFF || p[2] != 0xFF || p[3] != 0xFF)
		return 0;
	if (fold_eq(p + 4, "getinfo", 7) && q3_word_ends(q, 11))
		return 1;
	return has(q, 13) && fold_eq(p + 4, "getstatus", 9) && q3_word_ends(q, 13);
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

// quake3_handle answers FF FF FF FF getinfo / getstatus, then the end,
// "\n" or NUL.
static __always_inline int quake3_handle(struct query *q, const int v6)
{
	__u8 *p = q->p;
	__u32 which;
	if (has(q, 13) && fold_eq(p + 4, "getstatus", 9)) {
		which = QUAKE3_STATUS;
		if (!q3_ends(q, 13))
			return pass(q);
	} else if (has(q, 11) && fold_eq(p + 4, "getinfo", 7)) {
		which = QUAKE3_INFO;
		if (!q3_ends(q, 11))
			return pass(q);
	} else {
		return pass(q);
	}
	struct reply *body = slot(q, which);
	if (!body || !body->len)
		return pass(q);
	if (silenced(q))
		return XDP_DROP;
	if (!rate_allow(q)) {
		count(q, OUT_RATE_LIMITED, 0);
		return XDP_DROP;
	}
	return answer(q, v6, OUT_OPEN, body, 0, 0);
}

#endif

PROTOCOL(quake3, QUAKE3_SLOTS)

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

// q3_word_ends reports whether an unquoted token that ends n bytes into
// the payload ends there as ioquake3's tokenizer reads it (quake3.tokenAt):
// the line ends (the payload, NUL, "\n"), or whitespace (1 to 32), a '"',
// "//" or "/*" follows.
static __always_inline int q3_word_ends(const struct query *q, const __u32 n)
{
	if (q->r.plen == n)
		return 1;
	const __u8 *p = q->p;
	if (p + n + 1 > (__u8 *)q->end)
		return 0;
	__u8 c = p[n];
	if (c <= ' ' || c == '"')
		return 1;
	if (c != '/' || q->r.plen == n + 1 || p + n + 2 > (__u8 *)q->end)
		return 0;
	return p[n + 1] == '/' || p[n + 1] == '*';
}

// The line reader's scratch (q3_line, one per CPU): the line after FF FF
// FF FF as ioquake3 reads it (MSG_ReadStringLine: at most Q3_MAX_LINE
// bytes) and where q3_step is in it.
#define Q3_MAX_LINE 1023
#define Q3_LINE_MASK 1023
struct q3line {
	__u32 n;       // the line's bytes in b (it may end sooner, at NUL or "\n")
	__u32 pos;     // where q3_step reads next
	__u32 comment; // 1: inside "/* */"
	__u32 tok;     // where the first token starts (its '"' if quoted)
	__u32 claims;  // 1: the first token is getinfo or getstatus
	__u8 b[Q3_MAX_LINE + 1 + 16]; // 16: fold_eq reads a word from any index below Q3_MAX_LINE
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct q3line);
} q3_line SEC(".maps");

// The command words, 8 bytes at a time as q3_fold8 reads them (little
// endian): "getinfo" and its 8th byte masked, "getstatu" then 's'.
#define Q3_GETINFO 0x006f666e69746567ULL
#define Q3_GETSTATU 0x7574617473746567ULL
#define Q3_LOW7 0x00ffffffffffffffULL

// q3_fold8 is 8 bytes of b from i, each with 0x20 set (quake3's
// hasPrefixFold: on the words' letters, case folded).
static __always_inline __u64 q3_fold8(const __u8 *b)
{
	__u64 v = 0;
#pragma unroll
	for (int i = 0; i < 8; i++)
		v |= (__u64)(b[i] | 0x20) << (8 * i);
	return v;
}

// q3_line_word reports whether the line's first token (l->tok) is getinfo
// or getstatus in any case: quoted, up to the next '"' or the line's end;
// else up to whitespace, a '"', "//", "/*" or the end (quake3.tokenAt).
static __always_inline int q3_line_word(const struct q3line *l)
{
	__u32 len = l->n;
	__u32 start = l->tok;
	if (start >= Q3_MAX_LINE)
		return 0;
	int quoted = l->b[start & Q3_LINE_MASK] == '"';
	start += quoted;
	if (start >= Q3_MAX_LINE)
		return 0;
	const __u8 *w = l->b + (start & Q3_LINE_MASK);
	__u64 v = q3_fold8(w);
	__u32 e;
	if ((v & Q3_LOW7) == Q3_GETINFO)
		e = start + 7;
	else if (v == Q3_GETSTATU && (w[8] | 0x20) == 's')
		e = start + 9;
	else
		return 0;
	if (e > len)
		return 0; // the word is cut by the line's end
	if (e == len || e >= Q3_MAX_LINE)
		return 1;
	__u8 c = l->b[e & Q3_LINE_MASK];
	if (c == 0 || c == '\n' || c == '"')
		return 1;
	if (quoted)
		return 0;
	if (c <= ' ')
		return 1;
	if (c != '/' || e + 1 >= len)
		return 0;
	c = l->b[(e + 1) & Q3_LINE_MASK];
	return c == '/' || c == '*';
}

// q3_step is one step of bpf_loop over the line (quake3.tokenAt's first
// call): it skips whitespace and "/* */" comments to the first token and
// stops there (tok, and claims when it is a query), at "//" or at the
// line's end (no token).
static long q3_step(__u64 i, void *unused)
{
	__u32 zero = 0;
	struct q3line *l = bpf_map_lookup_elem(&q3_line, &zero);
	if (!l)
		return 1;
	__u32 pos = l->pos, n = l->n;
	if (pos >= n || pos >= Q3_MAX_LINE)
		return 1;
	__u8 c = l->b[pos & Q3_LINE_MASK];
	if (c == 0 || c == '\n')
		return 1;
	__u8 next = pos + 1 < n ? l->b[(pos + 1) & Q3_LINE_MASK] : 0;
	if (l->comment) { // ioquake3 looks for "*/" from the '*' of "/*"
		if (c == '*' && next == '/') {
			l->comment = 0;
			pos++;
		}
		l->pos = pos + 1;
		return 0;
	}
	if (c <= ' ') {
		l->pos = pos + 1;
		return 0;
	}
	if (c == '/' && next == '/')
		return 1;
	if (c == '/' && next == '*') {
		l->comment = 1;
		l->pos = pos + 1;
		return 0;
	}
	l->tok = pos;
	l->claims = q3_line_word(l);
	return 1;
}

// q3_claim_line is quake3_claim for a line that does not start with the
// command (whitespace, a quote, a comment first: quake3.command): it
// copies the line into q3_line and finds its first token with bpf_loop.
static __noinline int q3_claim_line(struct xdp_md *ctx, __u32 off, __u32 plen)
{
	__u32 zero = 0;
	struct q3line *l = bpf_map_lookup_elem(&q3_line, &zero);
	if (!l || plen < 4 + 7)
		return 0;
	__u32 n = plen - 4;
	if (n > Q3_MAX_LINE)
		n = Q3_MAX_LINE;
	if (n < 7)
		return 0;
	if (bpf_xdp_load_bytes(ctx, off + 4, l->b, n) < 0)
		return 0;
	l->n = n;
	l->pos = 0;
	l->comment = 0;
	l->claims = 0;
	bpf_loop(Q3_MAX_LINE + 1, q3_step, 0, 0);
	l = bpf_map_lookup_elem(&q3_line, &zero);
	return l && l->claims;
}

// quake3_claim takes a whole Quake 3 query, exactly what quake3.Claims
// takes: FF FF FF FF then a line whose first token, as ioquake3 reads it,
// is getinfo or getstatus in any case ("getinfoX" is not: divert leaves it
// to the game server). A line that starts with the command is read here;
// one that starts with whitespace, a quote or a comment by q3_claim_line.
static __always_inline int quake3_claim(const struct query *q)
{
	const __u8 *p = q->p;
	if (!has(q, 11) || p[0] != 0xFF || p[1] != 0xFF || p[2] != 0xFF || p[3] != 0xFF)
		return 0;
	__u8 c = p[4];
	if (c == 0 || c == '\n')
		return 0;
	if (c <= ' ' || c == '"' || c == '/') {
		// the payload's offset: the frame is Ethernet, IPv4 without
		// options or IPv6 without extension headers, UDP (queryd.c)
		void *data = (void *)(long)q->ctx->data;
		struct ethhdr *eth = data;
		if ((void *)(eth + 1) > q->end)
			return 0;
		__u32 off = sizeof(struct ethhdr) + sizeof(struct udphdr) +
			    (eth->h_proto == bpf_htons(ETH_P_IPV6) ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
		return q3_claim_line(q->ctx, off, q->r.plen);
	}
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
	if (silenced(q) || shed(q))
		return XDP_DROP;
	if (!rate_allow(q)) {
		count(q, OUT_RATE_LIMITED, 0);
		return XDP_DROP;
	}
	return answer(q, v6, OUT_OPEN, body, 0, 0);
}

#endif

PROTOCOL(quake3, QUAKE3_SLOTS)

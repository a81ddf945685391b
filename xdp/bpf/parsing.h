// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Header parsing with a cursor (after xdp-tutorial's parsing_helpers.h):
// each helper checks that its header is inside the frame, returns it and
// moves the cursor past it, or returns 0 and leaves the cursor.
#pragma once

#include "net.h"

struct cursor {
	void *pos;
	void *end;
};

static __always_inline struct ethhdr *parse_ethhdr(struct cursor *c)
{
	struct ethhdr *h = c->pos;
	if ((void *)(h + 1) > c->end)
		return 0;
	c->pos = h + 1;
	return h;
}

// parse_iphdr takes an IPv4 header without options (ihl 5): the only kind
// the program answers.
static __always_inline struct iphdr *parse_iphdr(struct cursor *c)
{
	struct iphdr *h = c->pos;
	if ((void *)(h + 1) > c->end)
		return 0;
	c->pos = h + 1;
	return h;
}

static __always_inline struct ipv6hdr *parse_ipv6hdr(struct cursor *c)
{
	struct ipv6hdr *h = c->pos;
	if ((void *)(h + 1) > c->end)
		return 0;
	c->pos = h + 1;
	return h;
}

static __always_inline struct udphdr *parse_udphdr(struct cursor *c)
{
	struct udphdr *h = c->pos;
	if ((void *)(h + 1) > c->end)
		return 0;
	c->pos = h + 1;
	return h;
}

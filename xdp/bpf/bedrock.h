// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Minecraft Bedrock: the unconnected ping (01 or 02, the i64 time, RakNet's
// magic, the client's GUID: exactly 33 bytes) gets the pong with the
// ping's time, under Bedrock's per-source packet rate and the unproven
// budget (RakNet's ping proves nothing). A 33-byte datagram with the magic
// and another id goes to the socket path (malformed there).
#pragma once

#include "reply.h"

#define BEDROCK_PING_LEN 33

static const __u8 raknet_magic[16] = {0x00, 0xFF, 0xFF, 0x00, 0xFE, 0xFE, 0xFE, 0xFE,
				      0xFD, 0xFD, 0xFD, 0xFD, 0x12, 0x34, 0x56, 0x78};

// is_bedrock reports whether the payload is an unconnected ping.
static __always_inline int is_bedrock(const struct query *q)
{
	const __u8 *p = q->p;
	if (q->r.plen != BEDROCK_PING_LEN || !has(q, BEDROCK_PING_LEN) || (p[0] != 0x01 && p[0] != 0x02))
		return 0;
#pragma unroll
	for (int i = 0; i < 16; i++) {
		if (p[9 + i] != raknet_magic[i])
			return 0;
	}
	return 1;
}

// bedrock handles a ping is_bedrock accepts.
static __always_inline int bedrock(struct query *q, const int v6)
{
	const __u8 *p = q->p;
	struct reply *body = slot(q, SLOT_BEDROCK_PONG);
	if (!body || !body->len)
		return pass(q);
	if (q->stale) {
		count(q, PROTO_BEDROCK, OUT_STALE, 0);
		return XDP_DROP;
	}
	const struct config *c = q->c;
	if (c->bedrock_cost && !bucket_allow(&bedrate, &q->s.key, q->now, c->bedrock_cost, c->bedrock_tau)) {
		count(q, PROTO_BEDROCK, OUT_RATE_LIMITED, 0);
		return XDP_DROP;
	}
	if (!has(q, 9))
		return pass(q);
	__builtin_memcpy(q->r.echo, p + 1, 8); // the pong echoes the ping's time
	return answer(q, v6, PROTO_BEDROCK, OUT_OPEN, body, 0, 8);
}
